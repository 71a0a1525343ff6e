// LaneAllocator: slices on one lane must come back exactly when a viewer sorts the begin and end
// events by timestamp (ties in file order) and pairs each end with the innermost open slice.
#include "lib/export/lane_allocator.h"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "lib/export/utilization.h"

namespace cuscope::exporter {
namespace {

struct Interval {
  uint64_t start, end;
};

// Places `slices` in the given order and checks that every lane pairs up into exactly the slices
// placed on it. Returns the lanes.
std::vector<int> PlaceAndCheck(const std::vector<Interval>& slices) {
  LaneAllocator lanes;
  std::vector<int> placed;
  struct Event {
    uint64_t ts;
    size_t order;
    bool begin;
    size_t slice;
  };
  std::map<int, std::vector<Event>> events;
  size_t order = 0;
  for (size_t i = 0; i < slices.size(); ++i) {
    const int lane = lanes.Place(slices[i].start, slices[i].end);
    placed.push_back(lane);
    if (lane < 0) continue;
    // Written as a begin and an end right after it, as the writers do.
    events[lane].push_back({slices[i].start, order++, true, i});
    events[lane].push_back({slices[i].end, order++, false, i});
  }
  for (auto& [lane, list] : events) {
    std::stable_sort(list.begin(), list.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
    std::vector<size_t> stack;
    for (const Event& e : list) {
      if (e.begin) {
        stack.push_back(e.slice);
        continue;
      }
      if (stack.empty()) {
        ADD_FAILURE() << "end without begin on lane " << lane;
        continue;
      }
      const size_t closed = stack.back();
      stack.pop_back();
      // The viewer gives the closed slice this end: it must be the slice's own.
      EXPECT_EQ(slices[closed].end, e.ts) << "lane " << lane << ": slice [" << slices[closed].start << ", "
                                          << slices[closed].end << "] closed at " << e.ts;
    }
    EXPECT_TRUE(stack.empty());
  }
  return placed;
}

TEST(LaneAllocatorTest, SequentialSlicesShareLaneZero) {
  EXPECT_EQ(PlaceAndCheck({{0, 10}, {10, 20}, {25, 30}}), (std::vector<int>{0, 0, 0}));
}

TEST(LaneAllocatorTest, NestedSlicesInEndOrderShareALane) {
  // As CUPTI delivers them: the driver call inside the runtime call ends (and comes) first.
  EXPECT_EQ(PlaceAndCheck({{2, 8}, {0, 10}}), (std::vector<int>{0, 0}));
  // Same end: the inner one first, the outer one starts strictly before it.
  EXPECT_EQ(PlaceAndCheck({{5, 10}, {0, 10}}), (std::vector<int>{0, 0}));
  // Exactly the same extent.
  EXPECT_EQ(PlaceAndCheck({{0, 10}, {0, 10}}), (std::vector<int>{0, 0}));
}

TEST(LaneAllocatorTest, ConflictsGoToAnotherLane) {
  // Partial overlap.
  EXPECT_EQ(PlaceAndCheck({{0, 10}, {5, 15}}), (std::vector<int>{0, 1}));
  // Inside a slice written before it: its children are not known.
  EXPECT_EQ(PlaceAndCheck({{0, 10}, {2, 8}}), (std::vector<int>{0, 1}));
  // Same start, longer, after: its begin would sort after the first one's.
  EXPECT_EQ(PlaceAndCheck({{0, 5}, {0, 10}}), (std::vector<int>{0, 1}));
  // Ends where a slice written before it begins: that begin would sort before this end.
  EXPECT_EQ(PlaceAndCheck({{10, 20}, {0, 10}}), (std::vector<int>{0, 1}));
  // ... but starting where one written before it ends is fine.
  EXPECT_EQ(PlaceAndCheck({{0, 10}, {10, 20}}), (std::vector<int>{0, 0}));
}

TEST(LaneAllocatorTest, ZeroLengthSlicesNestAnywhere) {
  EXPECT_EQ(PlaceAndCheck({{0, 10}, {5, 5}, {10, 10}, {0, 0}, {3, 7}}), (std::vector<int>{0, 0, 0, 0, 1}));
}

TEST(LaneAllocatorTest, ForgottenRootsKeepTheLaneSound) {
  std::vector<Interval> slices;
  for (uint64_t i = 0; i < 3 * LaneAllocator::kMaxRoots; ++i) slices.push_back({10 * i, 10 * i + 5});
  // Long after the first ones were forgotten: one that would swallow the first slice, and one after
  // everything.
  slices.push_back({1, 3});
  slices.push_back({0, 6});
  slices.push_back({30 * LaneAllocator::kMaxRoots, 30 * LaneAllocator::kMaxRoots + 1});
  const std::vector<int> lanes = PlaceAndCheck(slices);
  for (size_t i = 0; i < 3 * LaneAllocator::kMaxRoots; ++i) ASSERT_EQ(lanes[i], 0);
  EXPECT_NE(lanes[lanes.size() - 3], 0);
  EXPECT_EQ(lanes.back(), 0);
}

TEST(LaneAllocatorTest, RandomSlicesInAnyOrderAlwaysPairUp) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 300; ++round) {
    std::vector<Interval> slices;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      // Small coordinates: plenty of shared starts, shared ends and touching slices.
      const uint64_t a = rng() % 40, b = rng() % 40;
      slices.push_back({std::min(a, b), std::max(a, b)});
    }
    if (round % 2 == 0) {
      // Half the rounds in end order, as the exporter hands slices over.
      std::sort(slices.begin(), slices.end(), [](const Interval& x, const Interval& y) {
        return x.end != y.end ? x.end < y.end : x.start > y.start;
      });
    }
    const std::vector<int> lanes = PlaceAndCheck(slices);
    for (int lane : lanes) EXPECT_GE(lane, 0);
    if (HasFailure()) break;
  }
}

TEST(LaneAllocatorTest, LanesRunOut) {
  LaneAllocator lanes;
  // Every slice partly overlaps every other one.
  for (size_t i = 0; i < LaneAllocator::kMaxLanes; ++i) EXPECT_EQ(lanes.Place(i, 1000 + i), static_cast<int>(i));
  EXPECT_EQ(lanes.Place(LaneAllocator::kMaxLanes, 2000), -1);
  EXPECT_EQ(lanes.lane_count(), LaneAllocator::kMaxLanes);
}

// ---- Utilization -------------------------------------------------------------------------------

TEST(UtilizationTest, AdaptiveBucket) {
  EXPECT_EQ(Utilization::AdaptiveBucket(0), 1000u);
  EXPECT_EQ(Utilization::AdaptiveBucket(5'000'000), 1000u);
  EXPECT_EQ(Utilization::AdaptiveBucket(5'000'001), 2000u);
  EXPECT_EQ(Utilization::AdaptiveBucket(50'000'000), 10'000u);                // 50 ms -> 10 µs
  EXPECT_EQ(Utilization::AdaptiveBucket(5'000'000'000), 1'000'000u);          // 5 s -> 1 ms
  EXPECT_EQ(Utilization::AdaptiveBucket(3'600'000'000'000), 1'000'000'000u);  // 1 h -> 1 s
}

TEST(UtilizationTest, UnionPerChunkCappedPerBucket) {
  auto u = Utilization::Create(1000, 1100, 10);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->bucket_count(), 11u);
  // Two overlapping operations in one chunk count once: [1000, 1015) busy.
  std::vector<std::pair<uint64_t, uint64_t>> chunk1 = {{1005, 1015}, {1000, 1010}};
  u->Add(0, &chunk1);
  // Another chunk repeats [1000, 1010): the bucket is capped at 100%.
  std::vector<std::pair<uint64_t, uint64_t>> chunk2 = {{1000, 1010}, {1050, 1052}};
  u->Add(0, &chunk2);
  const std::vector<Utilization::Sample> s = u->Samples(0);
  std::vector<std::pair<uint64_t, double>> got;
  for (const auto& x : s) got.push_back({x.time, x.percent});
  const std::vector<std::pair<uint64_t, double>> want = {{1000, 100}, {1010, 50}, {1020, 0}, {1050, 20}, {1060, 0}};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(u->Samples(1).empty());
  EXPECT_EQ(u->devices(), std::vector<uint32_t>{0});
}

TEST(UtilizationTest, TooManyBuckets) { EXPECT_FALSE(Utilization::Create(0, 1'000'000'000'000, 1).ok()); }

}  // namespace
}  // namespace cuscope::exporter
