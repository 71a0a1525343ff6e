// The calls lean collection times on the program's threads (CallTimer: a call and, for a
// synchronizing one, its sync record) and the request scopes (RequestScopes), on their way to the
// writer thread, which hands them to the records' sinks with its next turn.
//
// One lock, taken once per call on the program's thread; the writer swaps the vectors out with its
// own emptied ones, so neither side grows a vector from nothing after each turn. Bounded, so a
// writer that falls behind cannot make memory grow without bound: a call is refused once
// kMaxQueued calls and sync records wait, a scope once kMaxQueued calls, sync records and scopes
// do (the caller counts either as dropped); so at most about 2 x kMaxQueued records wait. Scopes
// never wake the writer: they go with the next buffer or batch of calls.
#ifndef CUSCOPE_LIB_CUPTI_TIMED_CALL_QUEUE_H_
#define CUSCOPE_LIB_CUPTI_TIMED_CALL_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "lib/core/records.h"

namespace cuscope::cupti {

class TimedCallQueue {
 public:
  // Every kBatch records queued, the writer is woken for them (Add says when).
  static constexpr size_t kBatch = 4096;
  static constexpr size_t kMaxQueued = size_t{1} << 18;

  enum class Added {
    kQueued,
    kBatchReady,  // this call's records crossed a multiple of kBatch: wake the writer
    kRefused,     // at the cap: nothing queued
  };
  // Program's threads. `call` or `sync` may be null; `launch`: the call is a kernel launch.
  Added Add(const core::ApiActivity* call, const core::SyncRecord* sync, bool launch);
  // A request or batch scope's begin (end 0) or end; false at the cap (scopes count towards it).
  bool AddScope(const core::RequestScopeActivity& scope);
  bool Waiting();

  // Writer thread: every scope, then every call, then every sync record queued so far, to `sink`.
  // Scopes first: a call belongs to the scope its thread opened before it.
  void DrainTo(core::ActivitySink& sink);
  // Writer thread, once the trace takes nothing more: what waits is let go, not kept to the cap.
  void Discard();
  // After the writer has finished: the vectors' capacity given back.
  void ReleaseMemory();
  // The memory the queue's vectors hold now, used or not (writer thread, or after it finished).
  size_t reserved_bytes();

  // Calls queued so far, and of them the kernel launches (each should bring a kernel record).
  uint64_t calls_queued() const { return calls_queued_.load(std::memory_order_relaxed); }
  uint64_t launches_queued() const { return launches_queued_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::vector<core::ApiActivity> calls_;  // mu_
  std::vector<core::SyncRecord> syncs_;   // mu_
  // Scopes (mu_), each with the offset of its batch's ids in scope_ids_.
  std::vector<std::pair<core::RequestScopeActivity, size_t>> scopes_;
  std::vector<uint64_t> scope_ids_;
  // Writer thread: swapped with the above at each drain.
  std::vector<core::ApiActivity> drained_calls_;
  std::vector<core::SyncRecord> drained_syncs_;
  std::vector<std::pair<core::RequestScopeActivity, size_t>> drained_scopes_;
  std::vector<uint64_t> drained_scope_ids_;
  std::atomic<uint64_t> calls_queued_{0};
  std::atomic<uint64_t> launches_queued_{0};
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_TIMED_CALL_QUEUE_H_
