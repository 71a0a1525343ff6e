// A CUPTI and driver stand-in for the collector's CPU tests: it records every call in order,
// fails the calls a test names, and delivers fabricated activity buffers through the callbacks
// the collector registered, as CUPTI's own thread would.
#ifndef CUSCOPE_TESTS_CUPTI_FAKE_CUPTI_H_
#define CUSCOPE_TESTS_CUPTI_FAKE_CUPTI_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/cupti/cupti_api.h"

namespace cuscope::cupti::testing {

class FakeCupti final : public CuptiApi {
 public:
  // Every record of a fabricated buffer takes one slot of this size.
  static constexpr size_t kRecordSlot = 1024;

  // Calls named as the log names them ("Subscribe", "RegisterBufferCallbacks",
  // "EnableActivity:<kind number>", "EnableCallback:<domain>:<cbid>") fail from now on.
  void Fail(const std::string& call);
  // Calls in order: "Subscribe", "Unsubscribe", "EnableCallback:<d>:<cbid>", "EnableActivity:<k>",
  // "DisableActivity:<k>", "EnableApiRecords:<api>:<cbid>:<0|1>", "RegisterBufferCallbacks", "FlushAll", "FlushAll:forced", "SetFlushPeriod",
  // "EnableLatencyTimestamps:<0|1>".
  std::vector<std::string> Calls() const;
  size_t Count(const std::string& call) const;
  // Forgets the calls logged so far.
  void ClearCalls();
  // Index of the last call named `call` in Calls(), or -1.
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
  absl::Status EnableActivity(CUpti_ActivityKind kind) override;
  void DisableActivity(CUpti_ActivityKind kind) override;
  // Logged as "EnableApiRecords:<runtime|driver>:<cbid>:<0|1>".
  absl::Status EnableApiRecords(v1::ApiDomain domain, uint32_t cbid, bool enable) override;
  absl::Status RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                       CUpti_BuffersCallbackCompleteFunc completed) override;
  absl::Status FlushAll(bool forced) override;
  void SetFlushPeriod(uint32_t period_ms) override;
  void UseSystemThreadIds() override {}
  absl::Status EnableLatencyTimestamps(bool enable) override;
  bool NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) override;
  uint64_t DroppedRecords(CUcontext, uint32_t) override { return 0; }
  uint64_t Timestamp() override { return clock_.fetch_add(1000); }
  // Moves the fake clock on (each Timestamp call also moves it 1 us).
  void AdvanceClock(uint64_t ns) { clock_.fetch_add(ns); }
  uint32_t Version() override { return 130001; }
  std::string CallbackName(v1::ApiDomain domain, uint32_t cbid) override;
  // The node's address stands for its id.
  uint64_t GraphNodeId(CUgraphNode node) override { return reinterpret_cast<uint64_t>(node); }
  // Context 7 for any context; a stream's id is its handle's value, plus 1000 for a per-thread call.
  uint32_t ContextId(CUcontext) override { return 7; }
  uint32_t StreamId(CUcontext, CUstream stream, bool per_thread) override {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(stream)) + (per_thread ? 1000 : 0);
  }
  bool DriverLoadable() override { return driver_loadable_; }
  // Whether the program has made its first CUDA call (a context exists) when asked.
  bool DriverHasContext() override { return driver_has_context_; }
  void set_driver_has_context(bool has) { driver_has_context_ = has; }
  absl::StatusOr<SystemInfo> QuerySystem() override;

 private:
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
  std::vector<HeldBuffer> held_;
  CUpti_CallbackFunc api_callback_ = nullptr;
  void* api_userdata_ = nullptr;
  CUpti_BuffersCallbackRequestFunc requested_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed_ = nullptr;
  std::atomic<uint64_t> clock_{1'000'000'000};
  bool driver_loadable_ = true;
  std::atomic<bool> driver_has_context_{true};
  int subscriber_token_ = 0;
};

}  // namespace cuscope::cupti::testing

#endif  // CUSCOPE_TESTS_CUPTI_FAKE_CUPTI_H_
