// The metric-collection warnings: replayed launches left out of the timeline, the time metric
// collection took, and a device whose kernel time is mostly replayed.
#include "lib/analysis/rules/rules.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::Config;
using cuscope::testing::MetricValues;
using cuscope::testing::SyntheticTrace;

std::vector<std::string> Warnings(SyntheticTrace& s) {
  const core::Trace trace = s.Load();
  return MetricCollectionRule(Timeline::Build(trace));
}

// Three 10 us kernels and `profiled` launches replayed for metrics in 100 ms windows, each measured
// at `replayed_us`.
void ProfiledRun(SyntheticTrace& s, int profiled, double replayed_us) {
  for (int i = 0; i < 3; ++i) s.Kernel("step", i * 100.0, 10);
  for (int i = 0; i < profiled; ++i) {
    MetricValues values = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}};
    if (replayed_us > 0) values.emplace_back("gpu__time_duration.sum", replayed_us * 1000);
    s.ProfiledLaunch(Config("profiled", 1, 128), 300 + i * 100'000.0, 100'000, values);
  }
}

TEST(MetricCollectionRule, WithoutProfilingNothingIsSaid) {
  SyntheticTrace s;
  ProfiledRun(s, 0, 0);
  EXPECT_TRUE(Warnings(s).empty());
}

TEST(MetricCollectionRule, ReplayedLaunchesAndTheCollectionTimeAreSaid) {
  SyntheticTrace s;
  ProfiledRun(s, 2, 5);
  const auto w = Warnings(s);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "2 replayed launches (metric collection) are left out of the timeline");
  EXPECT_EQ(w[1].rfind("metric collection took ", 0), 0u) << w[1];
  EXPECT_NE(w[1].find(" (2 replay windows and the launch calls of the profiled launches)"), std::string::npos)
      << w[1];
}

TEST(MetricCollectionRule, OneReplayWindowIsSingular) {
  SyntheticTrace s;
  ProfiledRun(s, 1, 5);
  const auto w = Warnings(s);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[1].find(" (1 replay window and "), std::string::npos) << w[1];
}

TEST(MetricCollectionRule, KernelTimeMostlyReplayedIsSaidBothSides) {
  // 30 us of kernels on the timeline: 30 us replayed is "most", 29 us is not.
  SyntheticTrace most;
  ProfiledRun(most, 3, 10);
  const auto w = Warnings(most);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[2].rfind("most of GPU 0's kernel time (30.0 us of 60.0 us) is in launches replayed for metrics",
                       0),
            0u)
      << w[2];
  SyntheticTrace less;
  ProfiledRun(less, 1, 29);
  EXPECT_EQ(Warnings(less).size(), 2u);
}

TEST(MetricCollectionRule, CollectionAfterTheTimelineWindowIsLeftToTheTopDown) {
  SyntheticTrace s;
  s.TimelineWindow(0, 1000);
  for (int i = 0; i < 3; ++i) s.Kernel("step", i * 100.0, 10);
  s.MetricsAfterWindow(Config("profiled", 1, 128), 5000, 100'000,
                       {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}});
  for (const std::string& w : Warnings(s)) EXPECT_EQ(w.find("metric collection took"), std::string::npos) << w;
}

}  // namespace
}  // namespace cuscope::analysis
