// The launch.overhead rule: a positive case, a negative control, and both sides of each threshold,
// on synthetic timelines.
#include "lib/analysis/rules/rules.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/analysis/rule_test_support.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::RunRule;
using cuscope::testing::With;
using cuscope::testing::HasOffender;

void ShortKernels(SyntheticTrace& s, int count, double kernel_us, double period_us, uint32_t graph_id = 0) {
  for (int i = 0; i < count; ++i) {
    s.Launch(i % 2 ? "tiny_add" : "tiny_mul", i * period_us - 4, 3, i * period_us, kernel_us, 7, 1, graph_id);
  }
}

TEST(LaunchOverheadRule, ManyShortKernelsWithGapsAreReportedWithGraphAdvice) {
  SyntheticTrace s;
  ShortKernels(s, 200, 5, 10);
  const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("short_kernels"), 200);
  EXPECT_NEAR(*f[0].number("median_gap_ns"), 5000, 1);
  EXPECT_NEAR(*f[0].number("launch_rate_per_s"), 200 / 1995e-6, 1000);
  EXPECT_EQ(f[0].recoverable_ns, 199u * 5000u);
  EXPECT_NE(f[0].recommendation.find("CUDA graph"), std::string::npos);
  EXPECT_TRUE(HasOffender(f[0], "tiny_add"));
}

TEST(LaunchOverheadRule, GraphLaunchedKernelsGetFusionAdviceOnly) {
  SyntheticTrace s;
  ShortKernels(s, 200, 5, 10, /*graph_id=*/3);
  const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].recommendation.find("already come from CUDA graphs"), std::string::npos) << f[0].recommendation;
}

TEST(LaunchOverheadRule, LongKernelsAreNotLaunchBound) {
  SyntheticTrace s;
  ShortKernels(s, 200, 500, 505);
  EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead").empty());
}

TEST(LaunchOverheadRule, ThresholdsBothSides) {
  {
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 10);
    EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead", With({"launch_min_kernels=201"})).empty());
  }
  {
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 10);
    EXPECT_EQ(RunRule(s, LaunchOverheadRule, "launch.overhead", With({"launch_min_kernels=200"})).size(), 1u);
  }
  {
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 10);
    EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead", With({"short_kernel_us=5"})).empty());
  }
  {
    // Gaps of 0.5 us behind 5 us kernels: ratio 0.1, under the default 0.25, over 0.05.
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 5.5);
    EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead").empty());
    SyntheticTrace s2;
    ShortKernels(s2, 200, 5, 5.5);
    EXPECT_EQ(RunRule(s2, LaunchOverheadRule, "launch.overhead", With({"launch_gap_to_runtime_ratio=0.05"})).size(), 1u);
  }
}

}  // namespace
}  // namespace cuscope::analysis
