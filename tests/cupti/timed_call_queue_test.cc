// The timed calls' way to the writer: scopes before calls before sync records, the writer woken
// once a batch is crossed, the cap refusing rather than growing, and what a failed write discards.
#include "lib/cupti/timed_call_queue.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cuscope::cupti {
namespace {

class OrderSink final : public core::ActivitySink {
 public:
  void Add(const core::KernelActivity&) override { seen.push_back("kernel"); }
  void Add(const core::ApiActivity& a) override { seen.push_back("call@" + std::to_string(a.start)); }
  void Add(const core::MemcpyRecord&) override { seen.push_back("memcpy"); }
  void Add(const core::MemsetRecord&) override { seen.push_back("memset"); }
  void Add(const core::SyncRecord& r) override { seen.push_back("sync@" + std::to_string(r.start)); }
  void Add(const core::NvtxActivity&) override { seen.push_back("nvtx"); }
  void Add(const core::NvtxPayloadRecord&) override { seen.push_back("payload"); }
  void Add(const core::MemoryOpRecord&) override { seen.push_back("memory"); }
  void Add(const core::OverheadActivity&) override { seen.push_back("overhead"); }
  void Add(const core::RequestScopeActivity& r) override {
    std::string ids;
    for (uint32_t i = 0; i < r.batch_count; ++i) ids += "," + std::to_string(r.batch_requests[i]);
    seen.push_back("scope@" + std::to_string(r.start) + ids);
  }
  void AddUntranslated(uint32_t) override { seen.push_back("untranslated"); }
  void AddIncomplete(uint32_t) override { seen.push_back("incomplete"); }
  std::vector<std::string> seen;
};

core::ApiActivity Call(uint64_t start) {
  core::ApiActivity a;
  a.start = start;
  a.end = start + 1;
  return a;
}

core::SyncRecord Sync(uint64_t start) {
  core::SyncRecord r;
  r.start = start;
  r.end = start + 1;
  return r;
}

TEST(TimedCallQueueTest, TheWriterGetsScopesThenCallsThenSyncRecordsWithEachBatchsIds) {
  TimedCallQueue queue;
  EXPECT_FALSE(queue.Waiting());
  const core::ApiActivity call = Call(20);
  const core::SyncRecord sync = Sync(21);
  EXPECT_EQ(queue.Add(&call, &sync, false), TimedCallQueue::Added::kQueued);
  const uint64_t ids[] = {7, 8};
  core::RequestScopeActivity batch;
  batch.start = 10;
  batch.batch_requests = ids;
  batch.batch_count = 2;
  EXPECT_TRUE(queue.AddScope(batch));
  core::RequestScopeActivity single;
  single.start = 11;
  EXPECT_TRUE(queue.AddScope(single));
  EXPECT_TRUE(queue.Waiting());
  OrderSink sink;
  queue.DrainTo(sink);
  EXPECT_EQ(sink.seen, (std::vector<std::string>{"scope@10,7,8", "scope@11", "call@20", "sync@21"}));
  EXPECT_FALSE(queue.Waiting());
  OrderSink again;
  queue.DrainTo(again);
  EXPECT_TRUE(again.seen.empty());  // each record once
}

TEST(TimedCallQueueTest, TheWriterIsWokenWhenACallCrossesABatchNotBefore) {
  TimedCallQueue queue;
  const core::ApiActivity call = Call(1);
  const core::SyncRecord sync = Sync(1);
  for (size_t i = 0; i + 1 < TimedCallQueue::kBatch; ++i) {
    ASSERT_EQ(queue.Add(&call, nullptr, false), TimedCallQueue::Added::kQueued) << i;
  }
  // kBatch - 1 queued: a call with its sync record crosses kBatch without landing on it.
  EXPECT_EQ(queue.Add(&call, &sync, false), TimedCallQueue::Added::kBatchReady);
  EXPECT_EQ(queue.Add(&call, nullptr, false), TimedCallQueue::Added::kQueued);
}

TEST(TimedCallQueueTest, AtTheCapACallOrScopeIsRefusedUntilTheWriterDrains) {
  TimedCallQueue queue;
  const core::ApiActivity call = Call(1);
  for (size_t i = 0; i < TimedCallQueue::kMaxQueued; ++i) {
    ASSERT_NE(queue.Add(&call, nullptr, false), TimedCallQueue::Added::kRefused) << i;
  }
  EXPECT_EQ(queue.Add(&call, nullptr, false), TimedCallQueue::Added::kRefused);
  EXPECT_FALSE(queue.AddScope(core::RequestScopeActivity{}));
  EXPECT_EQ(queue.calls_queued(), TimedCallQueue::kMaxQueued);
  OrderSink sink;
  queue.DrainTo(sink);
  EXPECT_EQ(sink.seen.size(), TimedCallQueue::kMaxQueued);
  EXPECT_EQ(queue.Add(&call, nullptr, false), TimedCallQueue::Added::kQueued);  // room again once drained
}

TEST(TimedCallQueueTest, LaunchesAreCountedAmongTheCalls) {
  TimedCallQueue queue;
  const core::ApiActivity call = Call(1);
  queue.Add(&call, nullptr, true);
  queue.Add(&call, nullptr, false);
  queue.Add(nullptr, nullptr, true);  // no call: nothing to count
  EXPECT_EQ(queue.calls_queued(), 2u);
  EXPECT_EQ(queue.launches_queued(), 1u);
}

TEST(TimedCallQueueTest, DiscardLetsGoOfWhatWaits) {
  TimedCallQueue queue;
  const core::ApiActivity call = Call(1);
  queue.Add(&call, nullptr, false);
  EXPECT_TRUE(queue.AddScope(core::RequestScopeActivity{}));
  queue.Discard();
  EXPECT_FALSE(queue.Waiting());
  OrderSink sink;
  queue.DrainTo(sink);
  EXPECT_TRUE(sink.seen.empty());
}

// A server that starts and stops sessions for years keeps its memory flat: what a busy session's
// calls, sync records and scopes made the queue hold is given back once its writer has finished.
TEST(TimedCallQueueTest, ReleaseMemoryGivesBackWhatABusySessionHeld) {
  TimedCallQueue queue;
  EXPECT_EQ(queue.reserved_bytes(), 0u);
  const uint64_t ids[] = {1, 2, 3};
  core::RequestScopeActivity batch;
  batch.batch_requests = ids;
  batch.batch_count = 3;
  OrderSink sink;
  for (int round = 0; round < 2; ++round) {  // twice: both the queue's vectors and the drained ones grow
    for (uint64_t i = 0; i < 1000; ++i) {
      const core::ApiActivity call = Call(i);
      const core::SyncRecord sync = Sync(i);
      queue.Add(&call, &sync, false);
      EXPECT_TRUE(queue.AddScope(batch));
    }
    queue.DrainTo(sink);
  }
  EXPECT_EQ(sink.seen.size(), 6000u);
  const size_t held = queue.reserved_bytes();
  EXPECT_GE(held, 2 * 1000 * (sizeof(core::ApiActivity) + sizeof(core::SyncRecord)));
  queue.ReleaseMemory();
  EXPECT_EQ(queue.reserved_bytes(), 0u);
  // And it still works: a later session's call is queued and drained.
  const core::ApiActivity later = Call(5000);
  queue.Add(&later, nullptr, false);
  sink.seen.clear();
  queue.DrainTo(sink);
  EXPECT_EQ(sink.seen, (std::vector<std::string>{"call@5000"}));
}

}  // namespace
}  // namespace cuscope::cupti
