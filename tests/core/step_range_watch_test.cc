// Flight mode's NVTX step trigger: which ranges count as slow steps, at the threshold's edge, and
// that ranges never ended cannot grow its memory.
#include "lib/core/step_range_watch.h"

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

constexpr uint64_t kMs = 1'000'000;

NvtxActivity Start(uint64_t id, uint64_t time, const char* name) {
  NvtxActivity a;
  a.kind = v1::NVTX_KIND_RANGE_START;
  a.id = id;
  a.time = time;
  a.name = name;
  return a;
}

NvtxActivity End(uint64_t id, uint64_t time) {
  NvtxActivity a;
  a.kind = v1::NVTX_KIND_RANGE_END;
  a.id = id;
  a.time = time;
  return a;
}

TEST(StepRangeWatchTest, ARangeOfTheNameLongerThanTheThresholdIsReportedWithItsLength) {
  StepRangeWatch watch("step", 250 * kMs);
  EXPECT_FALSE(watch.Observe(Start(1, 1000 * kMs, "step")).has_value());
  auto slow = watch.Observe(End(1, 1400 * kMs));
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(*slow, 400 * kMs);
  EXPECT_EQ(watch.open_ranges(), 0u);
  // Ending it again reports nothing.
  EXPECT_FALSE(watch.Observe(End(1, 1500 * kMs)).has_value());
}

TEST(StepRangeWatchTest, AtTheThresholdOrBelowOrAnotherNameIsNoSlowStep) {
  StepRangeWatch watch("step", 250 * kMs);
  watch.Observe(Start(1, 0, "step"));
  EXPECT_FALSE(watch.Observe(End(1, 250 * kMs)).has_value());  // at the threshold: not above it
  watch.Observe(Start(2, 0, "step"));
  EXPECT_TRUE(watch.Observe(End(2, 250 * kMs + 1)).has_value());  // one ns above
  watch.Observe(Start(3, 0, "forward"));
  EXPECT_FALSE(watch.Observe(End(3, 900 * kMs)).has_value());
  EXPECT_FALSE(watch.Observe(End(99, 900 * kMs)).has_value());  // an end without its start
  watch.Observe(Start(4, 500 * kMs, "step"));
  EXPECT_FALSE(watch.Observe(End(4, 100 * kMs)).has_value());  // an end before its start
}

TEST(StepRangeWatchTest, NestedRangesOfTheNameAreTimedEachByItsId) {
  StepRangeWatch watch("step", 100 * kMs);
  watch.Observe(Start(1, 0, "step"));
  watch.Observe(Start(2, 10 * kMs, "step"));
  EXPECT_FALSE(watch.Observe(End(2, 60 * kMs)).has_value());
  auto outer = watch.Observe(End(1, 300 * kMs));
  ASSERT_TRUE(outer.has_value());
  EXPECT_EQ(*outer, 300 * kMs);
}

TEST(StepRangeWatchTest, RangesNeverEndedAreForgottenOldestFirst) {
  StepRangeWatch watch("step", 1);
  for (uint64_t id = 1; id <= StepRangeWatch::kMaxOpenRanges + 100; ++id) watch.Observe(Start(id, 0, "step"));
  EXPECT_EQ(watch.open_ranges(), StepRangeWatch::kMaxOpenRanges);
  EXPECT_FALSE(watch.Observe(End(1, 10)).has_value());  // forgotten
  EXPECT_TRUE(watch.Observe(End(StepRangeWatch::kMaxOpenRanges + 100, 10)).has_value());
  // Ended ids do not let the bookkeeping grow either.
  for (uint64_t id = 100'000; id < 100'000 + 3 * StepRangeWatch::kMaxOpenRanges; ++id) {
    watch.Observe(Start(id, 0, "step"));
    watch.Observe(End(id, 0));
  }
  EXPECT_LE(watch.open_ranges(), StepRangeWatch::kMaxOpenRanges);
}

}  // namespace
}  // namespace cuscope::core
