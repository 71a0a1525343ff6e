// A CUPTI and driver stand-in for the collector's CPU tests: it records every call in order,
// fails the calls a test names, and delivers fabricated activity buffers through the callbacks
// the collector registered, as CUPTI's own thread would.
//
// It is its own Profiler() too: the Range Profiler's, PM sampling's and the host side's calls go
// to the same log, named as ProfilerApi names them ("RangeProfilerEnable", "PmSamplingStart",
// ...). They succeed with plausible sizes and no data: a PM decode finds no sample, a Range
// Profiler decode finds the one range of the launch, and every metric evaluates to 1, 2, 3, ... in
// the order asked. What each profiler has enabled or started is kept, so a test can tell what a
// failure left behind.
#ifndef CUSCOPE_TESTS_CUPTI_FAKE_CUPTI_H_
#define CUSCOPE_TESTS_CUPTI_FAKE_CUPTI_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <map>

#include "lib/cupti/cupti_api.h"
#include "lib/cupti/profiler_api.h"

namespace cuscope::cupti::testing {

class FakeCupti final : public CuptiApi, public ProfilerApi {
 public:
  // Every record of a fabricated buffer takes one slot of this size.
  static constexpr size_t kRecordSlot = 1024;

  // Calls named as the log names them ("Subscribe", "RegisterBufferCallbacks",
  // "EnableActivity:<kind number>", "EnableCallback:<domain>:<cbid>") fail from now on.
  void Fail(const std::string& call);
  // `call` succeeds `successes` more times, then fails from then on (the second device's, say).
  void FailAfter(const std::string& call, int successes);
  // Calls in order: "Subscribe", "Unsubscribe", "EnableCallback:<d>:<cbid>", "EnableActivity:<k>",
  // "DisableActivity:<k>", "EnableApiRecords:<api>:<cbid>:<0|1>", "RegisterBufferCallbacks", "FlushAll", "FlushAll:forced", "SetFlushPeriod",
  // "EnableLatencyTimestamps:<0|1>".
  std::vector<std::string> Calls() const;
  size_t Count(const std::string& call) const;
  // Forgets the calls logged so far.
  void ClearCalls();
  // Index of the first or the last call named `call` in Calls(), or -1.
  int FirstIndexOf(const std::string& call) const;
  int LastIndexOf(const std::string& call) const;
  void set_driver_loadable(bool v) { driver_loadable_ = v; }

  // Asks the collector for a buffer, fills it with `kernels` kernel records starting at
  // `first_start` ns (1 us each, 1 us apart) and hands it back completed. False when the collector
  // gave no buffer (none active, or its pool at the cap).
  bool DeliverKernels(int kernels, uint64_t first_start);
  // The same, but the buffer is handed back only by a forced flush (records of work that had
  // not finished when the program stopped the collector).
  bool HoldKernelsUntilForcedFlush(int kernels, uint64_t first_start);
  // One buffer with an NVTX range's start (named `name`) and end records, of id `id`.
  bool DeliverRange(const char* name, uint64_t id, uint64_t start, uint64_t end);
  // cudaProfilerStart (at its exit) or cudaProfilerStop (at its entry), through the subscriber.
  // An NVTX call through CUPTI's NVTX callback: `params` is the call's generated_nvtx_meta.h
  // parameters, `returned` its return value (or null).
  void CallNvtx(CUpti_CallbackId cbid, const void* params, const void* returned = nullptr);
  // A kernel launch's entry and exit: through the runtime (cudaLaunchKernel, around the driver's
  // cuLaunchKernel as the real runtime does) or, with `driver_only`, the driver alone.
  void CallLaunch(uint32_t correlation, const char* symbol, bool driver_only = false);
  // A launch kernel metrics can profile: cudaLaunchKernel around cuLaunchKernel of `symbol` on a
  // context, in the fabricated kernel records' shape (grid 1, block 128).
  void CallKernelLaunch(uint32_t correlation, const char* symbol);
  // Any runtime or driver call's entry and exit, `inner` (a driver call, or none) between them as
  // the runtime makes its own: `params` the call's parameters (generated_cuda_*_meta.h), and the
  // fake clock moved `ns` during the call.
  struct Call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    const void* params = nullptr;
    int returned = 0;
  };
  void CallApi(uint32_t correlation, const Call& call, uint64_t ns = 0, const Call* inner = nullptr);
  // One callback as CUPTI would make it (an entry without its exit, say).
  void ApiCallbackForTest(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data);
  // A CUDA graph's kernel node created (as stream capture creates one per captured launch), and a
  // node cloned into an executable graph (instantiation), through the resource callbacks.
  void CallGraphNodeCreated(uint64_t node);
  void CallGraphNodeCloned(uint64_t node, uint64_t original);
  // A graph's instantiation begins (`starting`) or has ended.
  void CallGraphInstantiation(bool starting);
  void CallProfilerStart();
  void CallProfilerStop();

  // CuptiApi.
  absl::Status Subscribe(CUpti_CallbackFunc callback, void* userdata, CUpti_SubscriberHandle* subscriber) override;
  void Unsubscribe(CUpti_SubscriberHandle subscriber) override;
  absl::Status EnableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid) override;
  // Logged as "DisableCallback:<domain>:<cbid>".
  void DisableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) override;
  // Logged as "EnableDomain:<domain>:<0|1>".
  absl::Status EnableDomain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, bool enable) override;
  // Logged as "Finalize": the subscriber's callback and the buffer callbacks are forgotten, as CUPTI
  // forgets them (calls and buffers reach no one until they are given again).
  absl::Status Finalize() override;
  absl::Status EnableActivity(CUpti_ActivityKind kind) override;
  void DisableActivity(CUpti_ActivityKind kind) override;
  // Logged as "EnableApiRecords:<runtime|driver>:<cbid>:<0|1>".
  absl::Status EnableApiRecords(v1::ApiDomain domain, uint32_t cbid, bool enable) override;
  absl::Status RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                       CUpti_BuffersCallbackCompleteFunc completed) override;
  absl::Status FlushAll(bool forced) override;
  void SetFlushPeriod(uint32_t period_ms) override;
  void UseSystemThreadIds() override { NoteCall("UseSystemThreadIds"); }
  absl::Status EnableLatencyTimestamps(bool enable) override;
  bool NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) override;
  uint64_t DroppedRecords(CUcontext, uint32_t) override {
    NoteCall("DroppedRecords");
    return 0;
  }
  uint64_t Timestamp() override {
    NoteCall("Timestamp");
    return clock_.fetch_add(1000);
  }
  // Moves the fake clock on (each Timestamp call also moves it 1 us).
  void AdvanceClock(uint64_t ns) { clock_.fetch_add(ns); }
  uint32_t Version() override {
    NoteCall("Version");
    return 130001;
  }
  std::string CallbackName(v1::ApiDomain domain, uint32_t cbid) override;
  // The node's address stands for its id.
  uint64_t GraphNodeId(CUgraphNode node) override {
    NoteCall("GraphNodeId");
    return reinterpret_cast<uint64_t>(node);
  }
  // Context 7 for any context; a stream's id is its handle's value, plus 1000 for a per-thread call.
  uint32_t ContextId(CUcontext) override {
    NoteCall("ContextId");
    return 7;
  }
  uint32_t StreamId(CUcontext, CUstream stream, bool per_thread) override {
    NoteCall("StreamId");
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(stream)) + (per_thread ? 1000 : 0);
  }
  bool DriverLoadable() override { return driver_loadable_; }
  // Whether the program has made its first CUDA call (a context exists) when asked.
  bool DriverHasContext() override { return driver_has_context_; }
  void set_driver_has_context(bool has) { driver_has_context_ = has; }
  // Device 0, or `devices` of them (ids 0, 1, ...), each "Fake GPU".
  absl::StatusOr<SystemInfo> QuerySystem() override;
  void set_devices(uint32_t devices) { devices_ = devices; }
  ProfilerApi& Profiler() override { return *this; }

  // What the profilers hold now: Range Profiler objects enabled and started, PM sampling objects
  // enabled and started, host objects not yet deinitialized.
  size_t RangeProfilersEnabled() const;
  size_t RangeProfilersStarted() const;
  size_t PmSamplersEnabled() const;
  size_t PmSamplersStarted() const;
  size_t ProfilerHostsAlive() const;

  // ProfilerApi: each logged by its name; chip "FAKE100", every device supported.
  absl::Status ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) override;
  absl::StatusOr<uint32_t> DeviceId(CUcontext context) override;
  absl::Status DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) override;
  absl::Status ChipName(CUpti_Device_GetChipName_Params* p) override;
  absl::Status ProfilerCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) override;
  absl::Status RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) override;
  void RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) override;
  absl::Status RangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) override;
  absl::Status RangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) override;
  absl::Status RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override;
  absl::Status RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) override;
  absl::Status RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) override;
  absl::Status RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) override;
  absl::Status RangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override;
  absl::Status PmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) override;
  absl::Status PmSamplingEnable(CUpti_PmSampling_Enable_Params* p) override;
  void PmSamplingDisable(CUpti_PmSampling_Disable_Params* p) override;
  absl::Status PmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) override;
  absl::Status PmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) override;
  absl::Status PmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params* p) override;
  absl::Status PmSamplingStart(CUpti_PmSampling_Start_Params* p) override;
  absl::Status PmSamplingStop(CUpti_PmSampling_Stop_Params* p) override;
  absl::StatusOr<bool> PmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) override;
  absl::Status PmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) override;
  absl::Status PmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) override;
  absl::Status ProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override;
  void ProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) override;
  absl::Status ProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override;
  absl::Status ProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override;
  absl::Status ProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) override;
  absl::Status ProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override;
  absl::Status ProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override;

 
  // CUPTI calls made after a successful Finalize and before the next RegisterBufferCallbacks (an
  // attach's first call): each would have attached the real CUPTI again outside the schedule, or
  // met a finalize under way. The first such call's name, for the failure's message.
  uint64_t calls_while_detached() const { return calls_while_detached_.load(); }
  // Each successful Finalize from now on completes a buffer of `kernels` kernel records as it
  // detaches (after the detach began, before the callbacks are forgotten), as CUPTI might.
  void CompleteABufferAtFinalize(int kernels) { kernels_at_finalize_.store(kernels); }
  std::string first_call_while_detached() const;

 private:
  // Counts a call made while detached (above).
  void NoteCall(const char* name);
  struct HeldBuffer {
    uint8_t* buffer;
    size_t valid;
  };
  absl::Status Called(const std::string& call);
  bool FillKernels(int kernels, uint64_t first_start, HeldBuffer* out);
  // The subscribed callback and its userdata (null before Subscribe).
  std::pair<CUpti_CallbackFunc, void*> ApiCallback() const;
  void CallGate(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site);

  mutable std::mutex mu_;
  std::vector<std::string> calls_;
  std::set<std::string> failing_;
  std::map<std::string, int> fail_after_;  // successes left before the call fails
  std::vector<HeldBuffer> held_;
  CUpti_CallbackFunc api_callback_ = nullptr;
  void* api_userdata_ = nullptr;
  CUpti_BuffersCallbackRequestFunc requested_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed_ = nullptr;
  std::atomic<uint64_t> clock_{1'000'000'000};
  std::atomic<bool> detached_{false};
  std::atomic<int> kernels_at_finalize_{0};
  std::atomic<uint64_t> calls_while_detached_{0};
  std::string first_call_while_detached_;  // mu_
  bool driver_loadable_ = true;
  std::atomic<bool> driver_has_context_{true};
  int subscriber_token_ = 0;
  uint32_t devices_ = 1;

  // The profilers' objects, by the token handed out for each (mu_).
  uintptr_t NewObject();
  uintptr_t next_object_ = 0x1000;
  std::set<uintptr_t> range_enabled_;
  std::set<uintptr_t> range_started_;
  std::set<uintptr_t> pm_enabled_;
  std::set<uintptr_t> pm_started_;
  std::set<uintptr_t> hosts_;
};

}  // namespace cuscope::cupti::testing

#endif  // CUSCOPE_TESTS_CUPTI_FAKE_CUPTI_H_
