// Threshold overrides by name, as `--threshold name=value` applies them.
#include "lib/analysis/thresholds.h"

#include "gtest/gtest.h"

namespace cuscope::analysis {
namespace {

TEST(ThresholdsTest, OverridesByNameAndRejectsBadInput) {
  Thresholds t;
  EXPECT_TRUE(ApplyThresholdOverride("short_kernel_us=7.5", &t).ok());
  EXPECT_EQ(t.short_kernel_us, 7.5);
  EXPECT_FALSE(ApplyThresholdOverride("no_such_threshold=1", &t).ok());
  EXPECT_FALSE(ApplyThresholdOverride("short_kernel_us=abc", &t).ok());
  EXPECT_FALSE(ApplyThresholdOverride("short_kernel_us", &t).ok());
  EXPECT_FALSE(ApplyThresholdOverride("short_kernel_us=-1", &t).ok());
  EXPECT_EQ(t.short_kernel_us, 7.5);
}

}  // namespace
}  // namespace cuscope::analysis
