// `-c nvtx --nvtx-capture NAME`: which NVTX calls open and close the window.
#include "lib/core/nvtx_capture_watch.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

using Edge = NvtxCaptureWatch::Edge;

TEST(NvtxCaptureWatchTest, AWatchedPushOpensAndItsPopCloses) {
  NvtxCaptureWatch w("step");
  EXPECT_EQ(w.Push(1, "setup"), Edge::kNone);
  EXPECT_EQ(w.Pop(1), Edge::kNone);
  EXPECT_FALSE(w.opened());
  EXPECT_EQ(w.Push(1, "step"), Edge::kOpen);
  EXPECT_TRUE(w.opened());
  EXPECT_EQ(w.Pop(1), Edge::kClose);
  EXPECT_TRUE(w.closed());
}

TEST(NvtxCaptureWatchTest, RangesNestedInsideTheWatchedOneDoNotCloseIt) {
  NvtxCaptureWatch w("step");
  EXPECT_EQ(w.Push(1, "step"), Edge::kOpen);
  EXPECT_EQ(w.Push(1, "forward"), Edge::kNone);
  EXPECT_EQ(w.Push(1, "step"), Edge::kNone) << "a nested range of the same name is inside the window";
  EXPECT_EQ(w.Pop(1), Edge::kNone);
  EXPECT_EQ(w.Pop(1), Edge::kNone);
  EXPECT_FALSE(w.closed());
  EXPECT_EQ(w.Pop(1), Edge::kClose);
}

TEST(NvtxCaptureWatchTest, AnotherThreadsPopsDoNotCloseIt) {
  NvtxCaptureWatch w("step");
  EXPECT_EQ(w.Push(1, "step"), Edge::kOpen);
  EXPECT_EQ(w.Push(2, "loader"), Edge::kNone);
  EXPECT_EQ(w.Pop(2), Edge::kNone);
  EXPECT_EQ(w.Pop(2), Edge::kNone) << "an unbalanced pop elsewhere";
  EXPECT_FALSE(w.closed());
  EXPECT_EQ(w.Pop(1), Edge::kClose);
}

// As Nsight Systems' default: the first instance only.
TEST(NvtxCaptureWatchTest, OnlyTheFirstInstanceIsCaptured) {
  NvtxCaptureWatch w("step");
  EXPECT_EQ(w.Push(1, "step"), Edge::kOpen);
  EXPECT_EQ(w.Pop(1), Edge::kClose);
  EXPECT_EQ(w.Push(1, "step"), Edge::kNone);
  EXPECT_EQ(w.Pop(1), Edge::kNone);
  EXPECT_EQ(w.Start("step", 9), Edge::kNone);
}

TEST(NvtxCaptureWatchTest, NamesMatchExactly) {
  NvtxCaptureWatch w("step");
  EXPECT_EQ(w.Push(1, "step 1"), Edge::kNone);
  EXPECT_EQ(w.Push(1, "Step"), Edge::kNone);
  EXPECT_EQ(w.Push(1, "ste"), Edge::kNone);
  EXPECT_EQ(w.Push(1, ""), Edge::kNone);
  EXPECT_FALSE(w.opened());
}

TEST(NvtxCaptureWatchTest, AStartedRangeClosesAtTheEndOfItsId) {
  NvtxCaptureWatch w("request");
  EXPECT_EQ(w.Start("other", 4), Edge::kNone);
  EXPECT_EQ(w.Start("request", 5), Edge::kOpen);
  EXPECT_EQ(w.End(4), Edge::kNone);
  EXPECT_EQ(w.Pop(1), Edge::kNone) << "a pop does not end a start/end range";
  EXPECT_FALSE(w.closed());
  EXPECT_EQ(w.End(5), Edge::kClose);
}

TEST(NvtxCaptureWatchTest, AStartWithoutAnIdStaysOpen) {
  NvtxCaptureWatch w("request");
  EXPECT_EQ(w.Start("request", 0), Edge::kOpen);
  EXPECT_EQ(w.End(0), Edge::kNone);
  EXPECT_EQ(w.End(7), Edge::kNone);
  EXPECT_FALSE(w.closed());
}

TEST(NvtxCaptureWatchTest, ManyThreadsPushingTheNameOpenOnce) {
  NvtxCaptureWatch w("step");
  std::atomic<int> opens{0}, closes{0};
  std::vector<std::thread> threads;
  for (uint64_t t = 1; t <= 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        opens += w.Push(t, "step") == Edge::kOpen;
        closes += w.Pop(t) == Edge::kClose;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(opens.load(), 1);
  EXPECT_EQ(closes.load(), 1);
}

}  // namespace
}  // namespace cuscope::core
