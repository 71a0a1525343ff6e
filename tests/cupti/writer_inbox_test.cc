// The writer's inbox: turns in the order they came, the end only after every turn, what rides
// beside the queue taken whole, launch stacks bounded (graph nodes' never), and a wait that wakes
// for what the writer must act on (from another thread too) and not for what rides with the next
// chunk.
#include "lib/cupti/writer_inbox.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

namespace cuscope::cupti {
namespace {

using std::chrono::milliseconds;

QueuedStack LaunchStack(uint64_t correlation_id) {
  QueuedStack s;
  s.correlation_id = correlation_id;
  s.return_addresses = {0x1000, 0x2000};
  return s;
}

QueuedStack NodeStack(uint64_t node_id) {
  QueuedStack s;
  s.graph_node_id = node_id;
  s.return_addresses = {0x3000};
  return s;
}

TEST(WriterInboxTest, TurnsComeInTheirOrderAndTheEndOnlyAfterTheLast) {
  WriterInbox inbox;
  uint8_t buffer[16];
  inbox.PushTurn(CompletedBuffer{buffer, 12});
  inbox.PushTurn(ChooseHotKernelsTurn{3, 5});
  inbox.RequestExit();  // asked before the snapshot's turn is run: the turn still comes first
  inbox.PushTurn(SnapshotTurn{});

  WriterInbox::Next first = inbox.Wait(std::nullopt);
  ASSERT_TRUE(first.turn.has_value());
  EXPECT_FALSE(first.exit);
  ASSERT_TRUE(std::holds_alternative<CompletedBuffer>(*first.turn));
  EXPECT_EQ(std::get<CompletedBuffer>(*first.turn).buffer, buffer);
  EXPECT_EQ(std::get<CompletedBuffer>(*first.turn).valid, 12u);

  WriterInbox::Next second = inbox.Wait(std::nullopt);
  ASSERT_TRUE(second.turn.has_value());
  ASSERT_TRUE(std::holds_alternative<ChooseHotKernelsTurn>(*second.turn));
  EXPECT_EQ(std::get<ChooseHotKernelsTurn>(*second.turn).kernels, 3u);
  EXPECT_EQ(std::get<ChooseHotKernelsTurn>(*second.turn).launches_each, 5u);

  WriterInbox::Next third = inbox.Wait(std::nullopt);
  ASSERT_TRUE(third.turn.has_value());
  EXPECT_TRUE(std::holds_alternative<SnapshotTurn>(*third.turn));
  EXPECT_FALSE(third.exit);

  WriterInbox::Next last = inbox.Wait(std::nullopt);
  EXPECT_FALSE(last.turn.has_value());
  EXPECT_TRUE(last.exit);
}

TEST(WriterInboxTest, WhatRidesBesideTheQueueIsTakenWholeAndOnce) {
  WriterInbox inbox;
  inbox.AddWindow({.open = true, .time = 10, .reason = "capture", .kind = v1::WINDOW_KIND_TIMELINE});
  inbox.AddWindow({.open = false, .time = 20, .reason = "capture", .kind = v1::WINDOW_KIND_TIMELINE});
  ProfiledLaunch launch;
  launch.correlation_id = 77;
  inbox.AddProfiled(launch);
  CounterBatch active;
  active.device = 1;
  active.name = "sm__cycles_active.avg";
  CounterBatch other;
  other.device = 2;
  inbox.AddCounterBatches({active, other});
  EXPECT_TRUE(inbox.AddLaunchStack(LaunchStack(5)));
  inbox.AddGraphNodeStack(NodeStack(9));

  const std::vector<QueuedWindow> windows = inbox.TakeWindows();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_TRUE(windows[0].open);
  EXPECT_EQ(windows[0].time, 10u);
  EXPECT_FALSE(windows[1].open);
  EXPECT_EQ(windows[1].reason, "capture");
  const std::vector<ProfiledLaunch> profiled = inbox.TakeProfiled();
  ASSERT_EQ(profiled.size(), 1u);
  EXPECT_EQ(profiled[0].correlation_id, 77u);
  const std::vector<CounterBatch> batches = inbox.TakeCounterBatches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].name, "sm__cycles_active.avg");
  EXPECT_EQ(batches[1].device, 2u);
  const std::vector<QueuedStack> stacks = inbox.TakeStacks();
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_EQ(stacks[0].correlation_id, 5u);
  EXPECT_EQ(stacks[1].graph_node_id, 9u);

  EXPECT_TRUE(inbox.TakeWindows().empty());
  EXPECT_TRUE(inbox.TakeProfiled().empty());
  EXPECT_TRUE(inbox.TakeCounterBatches().empty());
  EXPECT_TRUE(inbox.TakeStacks().empty());
}

TEST(WriterInboxTest, LaunchStacksStopAtTheBoundUntilTakenAndGraphNodesNever) {
  WriterInbox inbox;
  for (size_t i = 0; i < WriterInbox::kMaxQueuedLaunchStacks; ++i) ASSERT_TRUE(inbox.AddLaunchStack(LaunchStack(i)));
  EXPECT_EQ(inbox.launch_stacks_dropped(), 0u);
  EXPECT_FALSE(inbox.AddLaunchStack(LaunchStack(1)));  // one past the bound
  EXPECT_FALSE(inbox.AddLaunchStack(LaunchStack(2)));
  EXPECT_EQ(inbox.launch_stacks_dropped(), 2u);
  inbox.AddGraphNodeStack(NodeStack(3));  // a node's stack is made once: never dropped
  EXPECT_EQ(inbox.TakeStacks().size(), WriterInbox::kMaxQueuedLaunchStacks + 1);
  // Taken: room again, and the count of those dropped stays.
  EXPECT_TRUE(inbox.AddLaunchStack(LaunchStack(4)));
  EXPECT_EQ(inbox.launch_stacks_dropped(), 2u);
}

// The wait, given a tick, lasts the tick out when only what rides with the next chunk came.
TEST(WriterInboxTest, WindowsProfiledLaunchesAndStacksDoNotEndATicksWait) {
  WriterInbox inbox;
  inbox.AddWindow({.open = true, .time = 1, .reason = "trace window", .kind = v1::WINDOW_KIND_TIMELINE});
  inbox.AddProfiled(ProfiledLaunch{});
  EXPECT_TRUE(inbox.AddLaunchStack(LaunchStack(1)));
  inbox.AddGraphNodeStack(NodeStack(1));
  inbox.Wake();
  const auto began = std::chrono::steady_clock::now();
  WriterInbox::Next idle = inbox.Wait(milliseconds(50));
  EXPECT_GE(std::chrono::steady_clock::now() - began, milliseconds(50));
  EXPECT_FALSE(idle.turn.has_value());
  EXPECT_FALSE(idle.exit);
}

TEST(WriterInboxTest, CountersWakeTheWriterUntilDroppedAndATimedBatchOnce) {
  WriterInbox inbox;
  inbox.AddCounterBatches({CounterBatch{}});
  auto began = std::chrono::steady_clock::now();
  WriterInbox::Next counters = inbox.Wait(std::chrono::seconds(10));
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));  // at once, not at the tick
  EXPECT_FALSE(counters.turn.has_value());
  EXPECT_FALSE(counters.exit);
  inbox.DropCounterBatches();  // after a failed write: nothing to wake for any more
  EXPECT_TRUE(inbox.TakeCounterBatches().empty());
  began = std::chrono::steady_clock::now();
  (void)inbox.Wait(milliseconds(50));
  EXPECT_GE(std::chrono::steady_clock::now() - began, milliseconds(50));

  inbox.MarkTimedBatchReady();
  began = std::chrono::steady_clock::now();
  (void)inbox.Wait(std::chrono::seconds(10));
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
  EXPECT_TRUE(inbox.TakeTimedBatchReady());
  EXPECT_FALSE(inbox.TakeTimedBatchReady());  // once
}

// A writer already waiting is woken by each of them from another thread (a lost notification
// would leave it waiting out the 10 s given, and the test fails on the time).
TEST(WriterInboxTest, AWaitingWriterWakesForEachFromAnotherThread) {
  const std::vector<std::function<void(WriterInbox&)>> wakers = {
      [](WriterInbox& inbox) { inbox.PushTurn(BeginCaptureTurn{}); },
      [](WriterInbox& inbox) { inbox.AddCounterBatches({CounterBatch{}}); },
      [](WriterInbox& inbox) { inbox.MarkTimedBatchReady(); },
      [](WriterInbox& inbox) { inbox.RequestExit(); },
  };
  for (size_t i = 0; i < wakers.size(); ++i) {
    WriterInbox inbox;
    std::thread program([&inbox, &wakers, i] {
      std::this_thread::sleep_for(milliseconds(20));
      wakers[i](inbox);
    });
    const auto began = std::chrono::steady_clock::now();
    WriterInbox::Next next = inbox.Wait(std::chrono::seconds(10));
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5)) << "waker " << i;
    program.join();
    if (i == 0) {
      EXPECT_TRUE(next.turn.has_value() && std::holds_alternative<BeginCaptureTurn>(*next.turn));
    }
    if (i == 3) {
      EXPECT_TRUE(next.exit);
    }
  }
}

}  // namespace
}  // namespace cuscope::cupti
