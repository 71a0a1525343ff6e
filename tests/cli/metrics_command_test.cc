#include <string>

#include <gtest/gtest.h>

#include "lib/cli/commands.h"

// A namespace of its own: other files of this test program have helpers of the same names
// (Capture()), and CI compiles them together (CUSCOPE_UNITY_TESTS).
namespace cuscope::cli::metrics_command_test {
namespace {

std::string Capture(const Args& args, int* rc) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  *rc = RunMetrics(args);
  std::string out = ::testing::internal::GetCapturedStdout();
  out += ::testing::internal::GetCapturedStderr();
  return out;
}

TEST(MetricsCommandTest, ListsEverySetWithItsNcuMetricNames) {
  int rc = -1;
  const std::string out = Capture({}, &rc);
  EXPECT_EQ(rc, 0);
  for (const char* line : {"sol\n", "occupancy\n", "stalls\n", "roofline\n",
                           "  dram__throughput.avg.pct_of_peak_sustained_elapsed\n",
                           "  smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\n"}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << " in\n" << out;
  }
}

TEST(MetricsCommandTest, CsvExpandsAListForNcu) {
  int rc = -1;
  const std::string out = Capture({"--csv", "occupancy,dram__bytes.sum"}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out,
            "sm__warps_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,"
            "dram__bytes.sum\n");
}

TEST(MetricsCommandTest, ABadEntryIsNamedAndExitsWithTwo) {
  int rc = -1;
  const std::string out = Capture({"sol,speed"}, &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("\"speed\""), std::string::npos) << out;
}

}  // namespace
}  // namespace cuscope::cli::metrics_command_test
