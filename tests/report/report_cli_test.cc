// The report, diff and log commands through their entry points, as `cuscope` runs them.
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "lib/report/tuning_log.h"
#include "tests/report/report_test_support.h"
#include "tests/report/report_test_traces.h"

namespace cuscope::cli {
namespace {

using testing::ReadFile;

std::string TempPath(const std::string& extension) { return testing::TempPath("cuscope_cli_report", extension); }

TEST(ReportCommandTest, WritesTheFile) {
  const std::string trace = testing::LaunchBoundRun();
  const std::string out = TempPath(".html");
  EXPECT_EQ(RunReport({trace, "-o", out}), 0);
  const std::string page = ReadFile(out);
  EXPECT_TRUE(absl::StartsWith(page, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(page, "\"rule_id\":\"launch.overhead\""));
  EXPECT_EQ(RunReport({}), 2);
  EXPECT_EQ(RunReport({trace, "--bogus"}), 2);
  EXPECT_EQ(RunReport({trace, "--max-slices", "5"}), 2);
  // Not wrapped or saturated into a huge budget: a negative number and one past 64 bits are refused.
  EXPECT_EQ(RunReport({trace, "--max-slices", "-5", "-o", out, "-f"}), 2);
  EXPECT_EQ(RunReport({trace, "--max-slices", "99999999999999999999999", "-o", out, "-f"}), 2);
  EXPECT_EQ(RunReport({trace, "--max-slices", "100", "-o", out, "-f"}), 0);
  EXPECT_EQ(RunReport({"/nonexistent.cuscope", "-o", out}), 2);
  EXPECT_EQ(RunReport({"--help"}), 0);
}

TEST(DiffCommandTest, AllThreeWaysToNameTheRuns) {
  const std::string base1 = testing::LaunchBoundRun(20), base2 = testing::LaunchBoundRun(20.5);
  const std::string new1 = testing::FusedRun(80), new2 = testing::FusedRun(81);
  EXPECT_EQ(RunDiff({base1, new1}), 0);
  EXPECT_EQ(RunDiff({base1, base2, "--", new1, new2, "--format", "json"}), 0);
  EXPECT_EQ(RunDiff({"--base", absl::StrCat(base1, ",", base2), "--new", absl::StrCat(new1, ",", new2), "--top", "0"}),
            0);
  EXPECT_EQ(RunDiff({base1}), 2);                  // one trace
  EXPECT_EQ(RunDiff({base1, new1, new2}), 2);      // three without "--"
  EXPECT_EQ(RunDiff({base1, "--"}), 2);            // nothing after "--"
  EXPECT_EQ(RunDiff({"--base", base1, new1}), 2);  // lists and arguments mixed
  EXPECT_EQ(RunDiff({base1, new1, "--format", "xml"}), 2);
  EXPECT_EQ(RunDiff({base1, "/nonexistent.cuscope"}), 2);
}

// For CI gates: exit 1 when NEW is slower, only when asked; the span options are checked.
TEST(DiffCommandTest, FailOnRegressionAndTheSpanOptions) {
  const std::string slow = testing::LaunchBoundRun(20), fast = testing::FusedRun(80);
  EXPECT_EQ(RunDiff({fast, slow}), 0);
  EXPECT_EQ(RunDiff({fast, slow, "--fail-on-regression"}), 1);
  EXPECT_EQ(RunDiff({slow, fast, "--fail-on-regression"}), 0);
  EXPECT_EQ(RunDiff({fast, slow, "--span", "all", "--fail-on-regression"}), 1);
  // No such range: not comparable, which a gate must not pass.
  EXPECT_EQ(RunDiff({fast, slow, "--nvtx", "step", "--fail-on-regression"}), 1);
  EXPECT_EQ(RunDiff({fast, slow, "--nvtx", "step"}), 0);
  EXPECT_EQ(RunDiff({fast, slow, "--span", "most"}), 2);
  EXPECT_EQ(RunDiff({fast, slow, "--span", "all", "--nvtx", "step"}), 2);
  EXPECT_EQ(RunDiff({fast, slow, "--nvtx", ""}), 2);
}

TEST(LogCommandTest, AddThenShow) {
  const std::string log = TempPath(".jsonl");
  const std::string base = testing::LaunchBoundRun(), next = testing::FusedRun();
  EXPECT_EQ(RunLog({"add", "--change", "fuse the loop", base, next, "--file", log}), 0);
  EXPECT_EQ(RunLog({"add", "--change", "undo", "--file", log, "--base", next, "--new", base}), 0);
  absl::StatusOr<std::vector<report::LogEntry>> entries = report::ReadJsonLog(log);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].change, "fuse the loop");
  EXPECT_EQ((*entries)[0].verdict, "helped");
  EXPECT_EQ((*entries)[1].verdict, "worse");
  EXPECT_EQ(RunLog({"show", "--file", log}), 0);

  const std::string md = TempPath(".md");
  EXPECT_EQ(RunLog({"add", "-m", "fuse", base, next, "-f", md}), 0);
  EXPECT_TRUE(absl::StrContains(ReadFile(md), "| fuse |"));
  EXPECT_EQ(RunLog({"show", "--file", md}), 0);

  EXPECT_EQ(RunLog({}), 2);
  EXPECT_EQ(RunLog({"remove"}), 2);
  EXPECT_EQ(RunLog({"add", base, next, "--file", log}), 2);      // no --change
  EXPECT_EQ(RunLog({"show", "--file", TempPath(".jsonl")}), 2);  // no such log
  EXPECT_EQ(RunLog({"show", base}), 2);
}

}  // namespace
}  // namespace cuscope::cli
