// The stuck correlation id: the vote, its thresholds, and the replayed-launch test that uses it.
#include "lib/core/stuck_correlation.h"

#include <vector>

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

KernelRow Kernel(uint64_t correlation, uint64_t graph = 0, uint64_t start = 0, uint64_t end = 10) {
  KernelRow k;
  k.correlation_id = correlation;
  k.graph_id = graph;
  k.start = start;
  k.end = end;
  return k;
}

std::optional<StuckCorrelation> Decide(const std::vector<KernelRow>& kernels) {
  StuckCorrelationVote vote;
  for (const KernelRow& k : kernels) vote.Vote(k);
  if (!vote.HasCandidate()) return std::nullopt;
  for (const KernelRow& k : kernels) vote.Count(k);
  return vote.Result();
}

std::vector<KernelRow> Mixed(uint64_t stuck, uint64_t distinct) {
  std::vector<KernelRow> out;
  for (uint64_t i = 0; i < stuck; ++i) out.push_back(Kernel(3));
  for (uint64_t i = 0; i < distinct; ++i) out.push_back(Kernel(1000 + i));
  return out;
}

TEST(StuckCorrelationTest, MostKernelsWithOneIdAreStuck) {
  auto s = Decide(Mixed(150, 149));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->id, 3u);
  EXPECT_EQ(s->kernels, 150u);
  EXPECT_EQ(s->kernels_with_id, 299u);
}

TEST(StuckCorrelationTest, DistinctIdsAreNot) { EXPECT_FALSE(Decide(Mixed(0, 10'001)).has_value()); }

TEST(StuckCorrelationTest, ThresholdEdges) {
  EXPECT_FALSE(Decide(Mixed(99, 0)).has_value()) << "fewer than 100 kernels";
  EXPECT_TRUE(Decide(Mixed(100, 0)).has_value());
  EXPECT_FALSE(Decide(Mixed(150, 150)).has_value()) << "half is not more than half";
  EXPECT_TRUE(Decide(Mixed(151, 150)).has_value());
}

TEST(StuckCorrelationTest, AGraphsKernelsSharingTheirLaunchsIdDoNotCount) {
  std::vector<KernelRow> kernels;
  for (int i = 0; i < 500; ++i) kernels.push_back(Kernel(7, /*graph=*/9));
  for (int i = 0; i < 50; ++i) kernels.push_back(Kernel(100 + i));
  EXPECT_FALSE(Decide(kernels).has_value());
}

TEST(StuckCorrelationTest, AStuckKernelThatRanIsNotAReplay) {
  const StuckCorrelation stuck{3, 200, 300};
  KernelRow ran = Kernel(3, 0, 100, 200);
  ran.flags = v1::KERNEL_FLAG_REPLAYED;
  EXPECT_FALSE(IsReplayedLaunch(ran, /*profiled=*/true, stuck));
  const KernelRow no_duration = Kernel(3, 0, 100, 100);
  EXPECT_TRUE(IsReplayedLaunch(no_duration, /*profiled=*/true, stuck));
  EXPECT_TRUE(IsReplayedLaunch(Kernel(4, 0, 100, 200), /*profiled=*/true, stuck));
  EXPECT_FALSE(IsReplayedLaunch(Kernel(4, 0, 100, 200), /*profiled=*/false, stuck));
  EXPECT_TRUE(IsReplayedLaunch(ran, /*profiled=*/false, std::nullopt)) << "its flag, without a stuck id";
}

}  // namespace
}  // namespace cuscope::core
