// What kernel metrics (the Range Profiler) and the GPU counters over time (PM sampling) ask of
// CUPTI's profiling API, behind one interface: one method per CUPTI call.
//
// The real implementation passes each call's parameter struct to CUPTI as the caller built it and
// turns the result into a status naming the call (cupti_status.h), so the calls CUPTI sees are
// exactly the callers'. Tests hand the profilers a fake (tests/cupti/fake_cupti.h) that records
// the calls, fails chosen ones and answers with plausible sizes and empty data, so starting,
// undoing, pausing and resuming them runs on a machine without a GPU.
//
// The host calls (cuptiProfilerHost*) need no GPU: they run nvperf's metric tables on the CPU. They
// are here too, so that a fake can stand in for the chip's tables as well.
#ifndef CUSCOPE_LIB_CUPTI_PROFILER_API_H_
#define CUSCOPE_LIB_CUPTI_PROFILER_API_H_

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cuscope::cupti {

class ProfilerApi {
 public:
  virtual ~ProfilerApi() = default;

  // ---- Shared by both profilers ----
  // cuptiProfilerInitialize: process-wide and counted by CUPTI.
  virtual absl::Status ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) = 0;
  // cuptiGetDeviceId: the device of a context.
  virtual absl::StatusOr<uint32_t> DeviceId(CUcontext context) = 0;
  virtual absl::Status DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) = 0;
  // cuptiDeviceGetChipName.
  virtual absl::Status ChipName(CUpti_Device_GetChipName_Params* p) = 0;

  // ---- The Range Profiler (kernel metrics) ----
  // cuptiProfilerGetCounterAvailability, for a context.
  virtual absl::Status ProfilerCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) = 0;
  virtual absl::Status RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) = 0;
  virtual void RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) = 0;
  virtual absl::Status RangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) = 0;
  virtual absl::Status RangeProfilerCounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) = 0;
  virtual absl::Status RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) = 0;
  virtual absl::Status RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) = 0;
  virtual absl::Status RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) = 0;
  virtual absl::Status RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) = 0;
  virtual absl::Status RangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) = 0;

  // ---- PM sampling (GPU counters over time) ----
  virtual absl::Status PmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) = 0;
  virtual absl::Status PmSamplingEnable(CUpti_PmSampling_Enable_Params* p) = 0;
  virtual void PmSamplingDisable(CUpti_PmSampling_Disable_Params* p) = 0;
  virtual absl::Status PmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) = 0;
  virtual absl::Status PmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) = 0;
  virtual absl::Status PmSamplingCounterDataImageInitialize(
      CUpti_PmSampling_CounterDataImage_Initialize_Params* p) = 0;
  virtual absl::Status PmSamplingStart(CUpti_PmSampling_Start_Params* p) = 0;
  virtual absl::Status PmSamplingStop(CUpti_PmSampling_Stop_Params* p) = 0;
  // True when the hardware buffer had overflowed. CUPTI says so by the params' flag or by
  // CUPTI_ERROR_OUT_OF_MEMORY; either way what it did decode is good, so neither is an error.
  virtual absl::StatusOr<bool> PmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) = 0;
  virtual absl::Status PmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) = 0;
  virtual absl::Status PmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) = 0;

  // ---- The host side (metric names to configurations, counter data to values; CPU only) ----
  virtual absl::Status ProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) = 0;
  virtual void ProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) = 0;
  virtual absl::Status ProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) = 0;
  virtual absl::Status ProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) = 0;
  virtual absl::Status ProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) = 0;
  virtual absl::Status ProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) = 0;
  virtual absl::Status ProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) = 0;
};

// The process's CUPTI. Never destroyed, like RealCuptiApi, whose Profiler() it is.
ProfilerApi& RealProfilerApi();

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_PROFILER_API_H_
