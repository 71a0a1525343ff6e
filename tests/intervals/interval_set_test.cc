#include "lib/intervals/interval_set.h"

#include "gtest/gtest.h"

namespace cuscope::intervals {
namespace {

TEST(IntervalTest, UnionMergesOverlappingAndTouchingInAnyOrder) {
  const IntervalSet u = UnionOf({{50, 60}, {0, 10}, {5, 20}, {20, 30}, {40, 40}});
  EXPECT_EQ(u, (IntervalSet{{0, 30}, {50, 60}}));
  EXPECT_EQ(TotalLength(u), 40u);
}

TEST(IntervalTest, BuilderMatchesUnionForOrderedInput) {
  IntervalSetBuilder b;
  b.Add(0, 10);
  b.Add(5, 8);
  b.Add(12, 20);
  b.Add(19, 25);
  EXPECT_TRUE(b.in_order());
  EXPECT_EQ(b.Take(), (IntervalSet{{0, 10}, {12, 25}}));
  IntervalSetBuilder unordered;
  unordered.Add(10, 20);
  unordered.Add(0, 5);
  EXPECT_FALSE(unordered.in_order());
}

TEST(IntervalTest, IntersectKeepsOnlyCommonTime) {
  const IntervalSet a{{0, 10}, {20, 30}};
  const IntervalSet b{{5, 25}};
  EXPECT_EQ(Intersect(a, b), (IntervalSet{{5, 10}, {20, 25}}));
  EXPECT_TRUE(Intersect(a, IntervalSet{{10, 20}}).empty());
}

TEST(IntervalTest, SubtractAndUnion) {
  const IntervalSet a{{0, 100}};
  const IntervalSet b{{10, 20}, {30, 40}, {90, 120}};
  EXPECT_EQ(Subtract(a, b), (IntervalSet{{0, 10}, {20, 30}, {40, 90}}));
  EXPECT_EQ(Union(IntervalSet{{0, 5}}, IntervalSet{{5, 9}, {20, 21}}), (IntervalSet{{0, 9}, {20, 21}}));
}

TEST(IntervalTest, GapsWithinSpan) {
  const IntervalSet busy{{10, 20}, {30, 40}};
  EXPECT_EQ(GapsWithin(busy, {0, 50}), (IntervalSet{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(GapsWithin(busy, {10, 40}), (IntervalSet{{20, 30}}));
}

TEST(IntervalTest, CoveredLengthClipsToWindow) {
  const IntervalSet busy{{10, 20}, {30, 40}, {50, 60}};
  EXPECT_EQ(CoveredLength(busy, {15, 55}), 5u + 10u + 5u);
  EXPECT_EQ(CoveredLength(busy, {20, 30}), 0u);
  EXPECT_EQ(CoveredLength(busy, {0, 100}), 30u);
  EXPECT_EQ(Hull(busy), (Interval{10, 60}));
}

}  // namespace
}  // namespace cuscope::intervals
