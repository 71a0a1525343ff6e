// Keeps the session's own CUPTI calls out while CUPTI is being detached or is detached
// (cupti_attachment.h): any CUPTI call after a finalize attaches CUPTI again, outside the duty
// cycle's schedule, and one made while a program thread finalizes may meet CUPTI half torn down.
//
// CuptiGate counts the calls in flight; Close() stops new ones from passing and waits for those
// in flight to return, so from Close() to Open() no call made through the gate is inside CUPTI.
// One atomic word holds the closed bit and the count, so a call either passes before the close
// (and is waited for) or finds the gate closed: there is no window between a check and the call.
//
// GatedCuptiApi is the session's CuptiApi when it may detach: each call passes the gate or gets
// its answer without CUPTI (a status, nothing done, or the clock below). The attachment makes its
// own moves (flush, subscribe, finalize) with the CuptiApi underneath, by the attachment's rules.
// Left ungated, by design:
//   NextRecord       walks a buffer CUPTI completed: the writer passes the gate once a buffer
//                    (TracePipeline::WalkBuffersThrough), not once a record, which would cost its
//                    per-record loop; and the detach waits until the writer walked every buffer
//                    handed over before it closes the gate.
//   DriverLoadable, DriverHasContext, QuerySystem: the driver's, not CUPTI's.
//   Profiler()       the Range Profiler and PM sampling pin the session (it never detaches).
// Refused calls: statuses are FailedPrecondition, switches do nothing, counts and ids are 0 (a
// stream's core::kNoStream), a callback's name is the one read while attached (or the
// placeholder CUPTI's would be), and the clock is the steady clock shifted by the offset to
// CUPTI's clock measured at the latest passing read: timestamps stay on CUPTI's clock while
// detached (both clocks run at the same rate; over a second they part by microseconds at most).
#ifndef CUSCOPE_LIB_CUPTI_CUPTI_GATE_H_
#define CUSCOPE_LIB_CUPTI_CUPTI_GATE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "lib/cupti/cupti_api.h"

namespace cuscope::cupti {

class CuptiGate {
 public:
  // Any thread: true when the call may go to CUPTI; then Leave() must follow it.
  bool Enter();
  void Leave();
  // One thread at a time (the collector's). Closes the gate and waits for the calls in flight,
  // at most `wait`: false when they did not all return (the gate is open again).
  bool Close(std::chrono::milliseconds wait);
  void Open();
  bool is_open() const;
  // Calls refused since the start (any thread).
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint64_t kClosed = uint64_t{1} << 63;
  std::atomic<uint64_t> word_{0};  // kClosed | calls in flight
  std::atomic<uint64_t> refused_{0};
};

class GatedCuptiApi final : public CuptiApi {
 public:
  // `inner` does the calls that pass; both outlive every session (never destroyed).
  GatedCuptiApi(CuptiApi& inner, CuptiGate& gate) : inner_(inner), gate_(gate) {}

  absl::Status Subscribe(CUpti_CallbackFunc callback, void* userdata, CUpti_SubscriberHandle* subscriber) override;
  void Unsubscribe(CUpti_SubscriberHandle subscriber) override;
  absl::Status EnableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid) override;
  void DisableCallback(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) override;
  absl::Status EnableDomain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, bool enable) override;
  absl::Status Finalize() override;
  absl::Status EnableActivity(CUpti_ActivityKind kind) override;
  void DisableActivity(CUpti_ActivityKind kind) override;
  absl::Status EnableApiRecords(v1::ApiDomain domain, uint32_t cbid, bool enable) override;
  absl::Status RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                       CUpti_BuffersCallbackCompleteFunc completed) override;
  absl::Status FlushAll(bool forced) override;
  void SetFlushPeriod(uint32_t period_ms) override;
  void UseSystemThreadIds() override;
  absl::Status EnableLatencyTimestamps(bool enable) override;
  bool NextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) override {
    return inner_.NextRecord(buffer, valid, record);
  }
  uint64_t DroppedRecords(CUcontext context, uint32_t stream_id) override;
  uint64_t Timestamp() override;
  uint32_t Version() override;
  std::string CallbackName(v1::ApiDomain domain, uint32_t cbid) override;
  uint64_t GraphNodeId(CUgraphNode node) override;
  uint32_t ContextId(CUcontext context) override;
  uint32_t StreamId(CUcontext context, CUstream stream, bool per_thread) override;
  bool DriverLoadable() override { return inner_.DriverLoadable(); }
  bool DriverHasContext() override { return inner_.DriverHasContext(); }
  absl::StatusOr<SystemInfo> QuerySystem() override { return inner_.QuerySystem(); }
  ProfilerApi& Profiler() override { return inner_.Profiler(); }

 private:
  // Runs `call` through the gate, or returns `refused`.
  template <typename Call, typename Refused>
  auto Through(Call call, Refused refused) -> decltype(call());
  static int64_t SteadyNowNs();

  CuptiApi& inner_;
  CuptiGate& gate_;
  // CUPTI's clock minus the steady clock, as of the latest read that passed.
  std::atomic<int64_t> clock_offset_ns_{0};
  std::atomic<uint32_t> version_{0};
  std::mutex names_mu_;
  std::map<std::pair<int, uint32_t>, std::string> names_;  // names_mu_: names read while attached
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CUPTI_GATE_H_
