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

// Kernels with queue times and no launch calls (the light set): `late` of the gaps end with a
// kernel the host queued 1 us before it started, after the GPU had gone idle; the others with one
// queued 100 us ahead, while the GPU was still busy.
SyntheticTrace QueuedShortKernels(int count, int late) {
  SyntheticTrace s;
  for (int i = 0; i < count; ++i) {
    const double start = i * 10.0;
    const bool queued_late = i >= 1 && i <= late;
    s.QueuedKernel(i % 2 ? "tiny_add" : "tiny_mul", queued_late ? start - 1 : start - 100, start, 5);
  }
  return s;
}

TEST(LaunchOverheadRule, QueueTimesSayTheHostLaunchedTooLate) {
  SyntheticTrace s = QueuedShortKernels(201, 200);
  const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("gaps_with_queue_time"), 200);
  EXPECT_EQ(*f[0].number("queued_after_idle_share"), 1.0);
  EXPECT_NE(f[0].recommendation.find("The host sets the pace: in 100.0% of these gaps"), std::string::npos)
      << f[0].recommendation;
  EXPECT_NE(f[0].recommendation.find("CUDA graph"), std::string::npos);
}

TEST(LaunchOverheadRule, QueueTimesSayTheKernelsWereAlreadyQueued) {
  SyntheticTrace s = QueuedShortKernels(201, 0);
  const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("queued_after_idle_share"), 0.0);
  EXPECT_EQ(*f[0].number("median_queue_lead_ns"), 100'000);
  EXPECT_EQ(f[0].recommendation.find("The host sets the pace"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("In 100.0% of these gaps the next kernel was already queued"), std::string::npos)
      << f[0].recommendation;
}

// The host's share at one half of the gaps, and one gap below it.
TEST(LaunchOverheadRule, QueueTimesThresholdAtHalfTheGaps) {
  {
    SyntheticTrace s = QueuedShortKernels(201, 100);
    const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(*f[0].number("queued_after_idle_share"), 0.5);
    EXPECT_NE(f[0].recommendation.find("The host sets the pace: in 50.0% of these gaps"), std::string::npos)
        << f[0].recommendation;
  }
  {
    SyntheticTrace s = QueuedShortKernels(201, 99);
    const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NEAR(*f[0].number("queued_after_idle_share"), 99.0 / 200.0, 1e-12);
    EXPECT_EQ(f[0].recommendation.find("The host sets the pace"), std::string::npos) << f[0].recommendation;
  }
}

// Negative control: without queue times the finding says nothing of them.
TEST(LaunchOverheadRule, NoQueueTimesNoQueueEvidence) {
  SyntheticTrace s;
  ShortKernels(s, 200, 5, 10);
  const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].number("queued_after_idle_share").has_value());
  EXPECT_EQ(f[0].recommendation.find("gaps"), std::string::npos) << f[0].recommendation;
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
