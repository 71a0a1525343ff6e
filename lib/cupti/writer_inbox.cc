#include "lib/cupti/writer_inbox.h"

#include <utility>

namespace cuscope::cupti {

void WriterInbox::PushTurn(WriterTurn turn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    turns_.push_back(std::move(turn));
  }
  cv_.notify_one();
}

void WriterInbox::AddWindow(QueuedWindow window) {
  std::lock_guard<std::mutex> lock(mu_);
  windows_.push_back(std::move(window));
}

void WriterInbox::AddProfiled(ProfiledLaunch launch) {
  std::lock_guard<std::mutex> lock(mu_);
  profiled_.push_back(std::move(launch));
}

bool WriterInbox::AddLaunchStack(QueuedStack stack) {
  std::lock_guard<std::mutex> lock(mu_);
  if (queued_launch_stacks_ >= kMaxQueuedLaunchStacks) {
    launch_stacks_dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ++queued_launch_stacks_;
  stacks_.push_back(std::move(stack));
  return true;
}

void WriterInbox::AddGraphNodeStack(QueuedStack stack) {
  std::lock_guard<std::mutex> lock(mu_);
  stacks_.push_back(std::move(stack));
}

void WriterInbox::AddCounterBatches(std::vector<CounterBatch> batches) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& b : batches) counter_batches_.push_back(std::move(b));
  }
  cv_.notify_one();
}

void WriterInbox::MarkTimedBatchReady() {
  {
    // Under the lock, so the writer cannot miss it between its check and its wait.
    std::lock_guard<std::mutex> lock(mu_);
    timed_batch_ready_.store(true);
  }
  cv_.notify_one();
}

void WriterInbox::RequestExit() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    exit_requested_ = true;
  }
  cv_.notify_all();
}

WriterInbox::Next WriterInbox::Wait(std::optional<std::chrono::milliseconds> tick) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto ready = [this] {
    return !turns_.empty() || exit_requested_ || !counter_batches_.empty() || timed_batch_ready_.load();
  };
  if (tick.has_value()) {
    cv_.wait_for(lock, *tick, ready);
  } else {
    cv_.wait(lock, ready);
  }
  Next next;
  if (!turns_.empty()) {
    next.turn = std::move(turns_.front());
    turns_.pop_front();
  } else {
    next.exit = exit_requested_;
  }
  return next;
}

std::vector<QueuedWindow> WriterInbox::TakeWindows() { return TakeAll(windows_); }
std::vector<CounterBatch> WriterInbox::TakeCounterBatches() { return TakeAll(counter_batches_); }
std::vector<ProfiledLaunch> WriterInbox::TakeProfiled() { return TakeAll(profiled_); }

std::vector<QueuedStack> WriterInbox::TakeStacks() {
  std::vector<QueuedStack> stacks;
  std::lock_guard<std::mutex> lock(mu_);
  stacks.swap(stacks_);
  queued_launch_stacks_ = 0;
  return stacks;
}

void WriterInbox::DropCounterBatches() {
  std::lock_guard<std::mutex> lock(mu_);
  counter_batches_.clear();
}

}  // namespace cuscope::cupti
