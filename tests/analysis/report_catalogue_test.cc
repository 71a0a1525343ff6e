// The catalogue of `cuscope stats` reports: every name it lists builds the report of that name.
#include "lib/analysis/report_catalogue.h"

#include <set>
#include <string_view>

#include "gtest/gtest.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;

TEST(ReportNamesTest, EveryNameBuilds) {
  SyntheticTrace s;
  s.Kernel("k", 0, 1);
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  for (std::string_view name : ReportNames()) {
    const auto table = BuildReport(name, t);
    ASSERT_TRUE(table.has_value()) << name;
    EXPECT_EQ(table->name, name);
  }
  EXPECT_FALSE(BuildReport("cuda_gpu_trace_nonexistent", t).has_value());
}

TEST(ReportNamesTest, EachReportIsListedOnceWithTheKernelSummaryFirst) {
  const std::vector<std::string_view>& names = ReportNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "cuda_gpu_kern_sum");
  EXPECT_EQ(std::set<std::string_view>(names.begin(), names.end()).size(), names.size());
}

}  // namespace
}  // namespace cuscope::analysis
