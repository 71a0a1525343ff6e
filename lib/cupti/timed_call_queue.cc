#include "lib/cupti/timed_call_queue.h"

namespace cuscope::cupti {

TimedCallQueue::Added TimedCallQueue::Add(const core::ApiActivity* call, const core::SyncRecord* sync, bool launch) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t before = calls_.size() + syncs_.size();
  if (before >= kMaxQueued) return Added::kRefused;
  if (call != nullptr) {
    calls_.push_back(*call);
    calls_queued_.fetch_add(1, std::memory_order_relaxed);
    if (launch) launches_queued_.fetch_add(1, std::memory_order_relaxed);
  }
  if (sync != nullptr) syncs_.push_back(*sync);
  // Crossing a multiple, not landing on one: a call may add one record or two.
  return before / kBatch != (calls_.size() + syncs_.size()) / kBatch ? Added::kBatchReady : Added::kQueued;
}

bool TimedCallQueue::AddScope(const core::RequestScopeActivity& scope) {
  std::lock_guard<std::mutex> lock(mu_);
  if (calls_.size() + syncs_.size() + scopes_.size() >= kMaxQueued) return false;
  scopes_.emplace_back(scope, scope_ids_.size());
  scope_ids_.insert(scope_ids_.end(), scope.batch_requests, scope.batch_requests + scope.batch_count);
  return true;
}

bool TimedCallQueue::Waiting() {
  std::lock_guard<std::mutex> lock(mu_);
  return !calls_.empty() || !syncs_.empty() || !scopes_.empty();
}

void TimedCallQueue::DrainTo(core::ActivitySink& sink) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    drained_calls_.swap(calls_);
    drained_syncs_.swap(syncs_);
    drained_scopes_.swap(scopes_);
    drained_scope_ids_.swap(scope_ids_);
  }
  for (auto& [scope, ids_at] : drained_scopes_) {
    scope.batch_requests = scope.batch_count > 0 ? drained_scope_ids_.data() + ids_at : nullptr;
    sink.Add(scope);
  }
  drained_scopes_.clear();
  drained_scope_ids_.clear();
  for (const core::ApiActivity& call : drained_calls_) sink.Add(call);
  for (const core::SyncRecord& sync : drained_syncs_) sink.Add(sync);
  drained_calls_.clear();
  drained_syncs_.clear();
}

void TimedCallQueue::Discard() {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.clear();
  syncs_.clear();
  scopes_.clear();
  scope_ids_.clear();
}

size_t TimedCallQueue::reserved_bytes() {
  const auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::lock_guard<std::mutex> lock(mu_);
  return bytes(calls_) + bytes(syncs_) + bytes(scopes_) + bytes(scope_ids_) + bytes(drained_calls_) +
         bytes(drained_syncs_) + bytes(drained_scopes_) + bytes(drained_scope_ids_);
}

void TimedCallQueue::ReleaseMemory() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<core::ApiActivity>().swap(calls_);
    std::vector<core::SyncRecord>().swap(syncs_);
    std::vector<std::pair<core::RequestScopeActivity, size_t>>().swap(scopes_);
    std::vector<uint64_t>().swap(scope_ids_);
  }
  std::vector<core::ApiActivity>().swap(drained_calls_);
  std::vector<core::SyncRecord>().swap(drained_syncs_);
  std::vector<std::pair<core::RequestScopeActivity, size_t>>().swap(drained_scopes_);
  std::vector<uint64_t>().swap(drained_scope_ids_);
}

}  // namespace cuscope::cupti
