#include "lib/intervals/claim_in_order.h"

#include "gtest/gtest.h"

namespace cuscope::intervals {
namespace {

TEST(ClaimInOrderTest, EarlierClaimantsTakeWhatTheyCoverAndLaterOnesOnlyTheRest) {
  IntervalSet idle{{0, 100}};
  const std::vector<IntervalSet> claimants{{{10, 30}}, {{20, 50}}, {{0, 5}, {40, 60}}};
  const std::vector<IntervalSet> claimed = ClaimInOrder(idle, claimants);
  ASSERT_EQ(claimed.size(), 3u);
  EXPECT_EQ(claimed[0], (IntervalSet{{10, 30}}));
  EXPECT_EQ(claimed[1], (IntervalSet{{30, 50}}));
  EXPECT_EQ(claimed[2], (IntervalSet{{0, 5}, {50, 60}}));
  EXPECT_EQ(idle, (IntervalSet{{5, 10}, {60, 100}}));
}

TEST(ClaimInOrderTest, WhatLiesOutsideTheUnclaimedTimeIsNeverClaimed) {
  IntervalSet idle{{10, 20}, {30, 40}};
  const std::vector<IntervalSet> claimants{{{0, 50}}};
  const std::vector<IntervalSet> claimed = ClaimInOrder(idle, claimants);
  EXPECT_EQ(claimed[0], (IntervalSet{{10, 20}, {30, 40}}));
  EXPECT_TRUE(idle.empty());
}

TEST(ClaimInOrderTest, ClaimedAndLeftTogetherAreExactlyTheTimeGiven) {
  const IntervalSet given{{0, 7}, {9, 40}, {41, 42}, {60, 95}};
  IntervalSet idle = given;
  const std::vector<IntervalSet> claimants{{{3, 12}}, {}, {{5, 41}, {80, 81}}, {{0, 100}}};
  const std::vector<IntervalSet> claimed = ClaimInOrder(idle, claimants);
  EXPECT_TRUE(claimed[1].empty());
  uint64_t total = TotalLength(idle);
  IntervalSet all = idle;
  for (const IntervalSet& c : claimed) {
    EXPECT_TRUE(Intersect(all, c).empty()) << "a stretch was claimed twice";
    total += TotalLength(c);
    all = Union(all, c);
  }
  EXPECT_EQ(all, given);
  EXPECT_EQ(total, TotalLength(given));
}

TEST(ClaimInOrderTest, NothingToClaimFromLeavesEveryClaimantEmpty) {
  IntervalSet idle;
  const std::vector<IntervalSet> claimants{{{0, 10}}, {{5, 20}}};
  const std::vector<IntervalSet> claimed = ClaimInOrder(idle, claimants);
  ASSERT_EQ(claimed.size(), 2u);
  EXPECT_TRUE(claimed[0].empty());
  EXPECT_TRUE(claimed[1].empty());
}

}  // namespace
}  // namespace cuscope::intervals
