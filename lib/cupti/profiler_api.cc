#include "lib/cupti/profiler_api.h"

#include "lib/cupti/cupti_status.h"

namespace cuscope::cupti {
namespace {

class RealProfiler final : public ProfilerApi {
 public:
  absl::Status ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) override {
    return CuptiStatus(cuptiProfilerInitialize(p), "cuptiProfilerInitialize");
  }
  absl::StatusOr<uint32_t> DeviceId(CUcontext context) override {
    uint32_t device = 0;
    if (auto st = CuptiStatus(cuptiGetDeviceId(context, &device), "cuptiGetDeviceId"); !st.ok()) return st;
    return device;
  }
  absl::Status DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) override {
    return CuptiStatus(cuptiProfilerDeviceSupported(p), "cuptiProfilerDeviceSupported");
  }
  absl::Status ChipName(CUpti_Device_GetChipName_Params* p) override {
    return CuptiStatus(cuptiDeviceGetChipName(p), "cuptiDeviceGetChipName");
  }

  absl::Status ProfilerCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) override {
    return CuptiStatus(cuptiProfilerGetCounterAvailability(p), "cuptiProfilerGetCounterAvailability");
  }
  absl::Status RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerEnable(p), "cuptiRangeProfilerEnable");
  }
  void RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) override { cuptiRangeProfilerDisable(p); }
  absl::Status RangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerGetCounterDataSize(p), "cuptiRangeProfilerGetCounterDataSize");
  }
  absl::Status RangeProfilerCounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerCounterDataImageInitialize(p), "cuptiRangeProfilerCounterDataImageInitialize");
  }
  absl::Status RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerSetConfig(p), "cuptiRangeProfilerSetConfig");
  }
  absl::Status RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerStart(p), "cuptiRangeProfilerStart");
  }
  absl::Status RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerStop(p), "cuptiRangeProfilerStop");
  }
  absl::Status RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerDecodeData(p), "cuptiRangeProfilerDecodeData");
  }
  absl::Status RangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override {
    return CuptiStatus(cuptiRangeProfilerGetCounterDataInfo(p), "cuptiRangeProfilerGetCounterDataInfo");
  }

  absl::Status PmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) override {
    return CuptiStatus(cuptiPmSamplingGetCounterAvailability(p), "cuptiPmSamplingGetCounterAvailability");
  }
  absl::Status PmSamplingEnable(CUpti_PmSampling_Enable_Params* p) override {
    return CuptiStatus(cuptiPmSamplingEnable(p), "cuptiPmSamplingEnable");
  }
  void PmSamplingDisable(CUpti_PmSampling_Disable_Params* p) override { cuptiPmSamplingDisable(p); }
  absl::Status PmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) override {
    return CuptiStatus(cuptiPmSamplingSetConfig(p), "cuptiPmSamplingSetConfig");
  }
  absl::Status PmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) override {
    return CuptiStatus(cuptiPmSamplingGetCounterDataSize(p), "cuptiPmSamplingGetCounterDataSize");
  }
  absl::Status PmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params* p) override {
    return CuptiStatus(cuptiPmSamplingCounterDataImageInitialize(p), "cuptiPmSamplingCounterDataImageInitialize");
  }
  absl::Status PmSamplingStart(CUpti_PmSampling_Start_Params* p) override {
    return CuptiStatus(cuptiPmSamplingStart(p), "cuptiPmSamplingStart");
  }
  absl::Status PmSamplingStop(CUpti_PmSampling_Stop_Params* p) override {
    return CuptiStatus(cuptiPmSamplingStop(p), "cuptiPmSamplingStop");
  }
  absl::StatusOr<bool> PmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) override {
    const CUptiResult r = cuptiPmSamplingDecodeData(p);
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) return CuptiStatus(r, "cuptiPmSamplingDecodeData");
    return p->overflow != 0 || r == CUPTI_ERROR_OUT_OF_MEMORY;
  }
  absl::Status PmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) override {
    return CuptiStatus(cuptiPmSamplingGetCounterDataInfo(p), "cuptiPmSamplingGetCounterDataInfo");
  }
  absl::Status PmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) override {
    return CuptiStatus(cuptiPmSamplingCounterDataGetSampleInfo(p), "cuptiPmSamplingCounterDataGetSampleInfo");
  }

  absl::Status ProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override {
    return CuptiStatus(cuptiProfilerHostInitialize(p), "cuptiProfilerHostInitialize");
  }
  void ProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) override {
    cuptiProfilerHostDeinitialize(p);
  }
  absl::Status ProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override {
    return CuptiStatus(cuptiProfilerHostConfigAddMetrics(p), "cuptiProfilerHostConfigAddMetrics");
  }
  absl::Status ProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override {
    return CuptiStatus(cuptiProfilerHostGetConfigImageSize(p), "cuptiProfilerHostGetConfigImageSize");
  }
  absl::Status ProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) override {
    return CuptiStatus(cuptiProfilerHostGetConfigImage(p), "cuptiProfilerHostGetConfigImage");
  }
  absl::Status ProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override {
    return CuptiStatus(cuptiProfilerHostGetNumOfPasses(p), "cuptiProfilerHostGetNumOfPasses");
  }
  absl::Status ProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override {
    return CuptiStatus(cuptiProfilerHostEvaluateToGpuValues(p), "cuptiProfilerHostEvaluateToGpuValues");
  }
};

}  // namespace

ProfilerApi& RealProfilerApi() {
  static auto* api = new RealProfiler();
  return *api;
}

}  // namespace cuscope::cupti
