#include "lib/report/tuning_log.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/report/report_test_support.h"
#include "tests/report/report_test_traces.h"

namespace cuscope::report {
namespace {

// As `cuscope log add --span all` compares: end to end.
DiffOptions EndToEnd() {
  DiffOptions options;
  options.span = DiffSpan::kAll;
  return options;
}

using testing::ReadFile;

std::string TempLog(const std::string& extension) { return testing::TempPath("cuscope_log_test", extension); }

struct Runs {
  std::vector<RunFigures> base, next;
  DiffResult diff;
};

Runs LaunchLoopFused() {
  Runs r;
  r.base.push_back(*LoadRunFigures(testing::LaunchBoundRun()));
  r.next.push_back(*LoadRunFigures(testing::FusedRun()));
  r.diff = DiffRuns(r.base, r.next, EndToEnd());
  return r;
}

const absl::Time kWhen = absl::FromUnixSeconds(1733211000);  // 2024-12-03T07:30:00Z

TEST(TuningLogTest, EntryHoldsTheFiguresBeforeAndAfter) {
  const Runs r = LaunchLoopFused();
  const LogEntry e = MakeLogEntry(r.diff, r.base, r.next, "fuse the step kernels", kWhen);
  EXPECT_EQ(e.date, "2024-12-03T07:30:00Z");
  EXPECT_EQ(e.change, "fuse the step kernels");
  EXPECT_DOUBLE_EQ(e.before.end_to_end_ns, 8'005'000);
  EXPECT_DOUBLE_EQ(e.after.end_to_end_ns, 1'621'000);
  EXPECT_DOUBLE_EQ(e.before.kernel_time_ns, 1'600'000);
  EXPECT_DOUBLE_EQ(e.after.gpu_busy_share, 1.0);
  EXPECT_EQ(e.verdict, "helped");
  EXPECT_EQ(e.conclusion, r.diff.conclusion);
  EXPECT_EQ(e.before.traces, std::vector<std::string>{r.base[0].label});
  EXPECT_TRUE(absl::StartsWith(e.before.top_finding, r.base[0].top_finding()->rule_id + ": ")) << e.before.top_finding;
  EXPECT_EQ(e.after.top_finding, r.next[0].top_finding() ? e.after.top_finding : "none");
}

TEST(TuningLogTest, JsonLinesRoundTrip) {
  const Runs r = LaunchLoopFused();
  const std::string path = TempLog(".jsonl");
  LogEntry first = MakeLogEntry(r.diff, r.base, r.next, "fuse \"step\" <kernels> | pipes\nand a newline · µ", kWhen);
  LogEntry second = MakeLogEntry(DiffRuns(r.next, r.base, EndToEnd()), r.next, r.base, "undo it", kWhen + absl::Hours(1));
  ASSERT_TRUE(AppendLogEntry(path, first).ok());
  ASSERT_TRUE(AppendLogEntry(path, second).ok());
  const std::string text = ReadFile(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;

  absl::StatusOr<std::vector<LogEntry>> read = ReadJsonLog(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  const LogEntry& a = (*read)[0];
  EXPECT_EQ(a.date, first.date);
  EXPECT_EQ(a.change, first.change);
  EXPECT_EQ(a.before.traces, first.before.traces);
  EXPECT_DOUBLE_EQ(a.before.end_to_end_ns, first.before.end_to_end_ns);
  EXPECT_DOUBLE_EQ(a.after.gpu_busy_share, first.after.gpu_busy_share);
  EXPECT_DOUBLE_EQ(a.after.kernel_time_ns, first.after.kernel_time_ns);
  EXPECT_EQ(a.before.top_finding, first.before.top_finding);
  EXPECT_EQ(a.verdict, "helped");
  EXPECT_EQ(a.conclusion, first.conclusion);
  EXPECT_EQ((*read)[1].verdict, "worse");
  EXPECT_EQ((*read)[1].date, "2024-12-03T08:30:00Z");

  const std::string table = RenderLogTable(*read);
  EXPECT_TRUE(absl::StrContains(table, "date")) << table;
  EXPECT_TRUE(absl::StrContains(table, "8.005 ms -> 1.621 ms")) << table;
  EXPECT_TRUE(absl::StrContains(table, "undo it")) << table;
  EXPECT_TRUE(absl::StrContains(table, "helped")) << table;
  EXPECT_TRUE(absl::StrContains(table, first.conclusion)) << table;
}

// By default the log compares what `cuscope diff` does, steady state, and says so; the end-to-end
// time is kept beside it.
TEST(TuningLogTest, TheEntrySaysWhichTimeItCompared) {
  const std::vector<RunFigures> base = {*LoadRunFigures(testing::LaunchBoundRun())};
  const std::vector<RunFigures> next = {*LoadRunFigures(testing::FusedRun())};
  const DiffResult steady = DiffRuns(base, next);
  const LogEntry e = MakeLogEntry(steady, base, next, "fuse", kWhen);
  EXPECT_EQ(e.compared, "steady_state");
  EXPECT_DOUBLE_EQ(e.before.time_ns, static_cast<double>(base[0].steady_ns));
  EXPECT_DOUBLE_EQ(e.before.end_to_end_ns, 8'005'000);
  EXPECT_NE(e.before.time_ns, e.before.end_to_end_ns) << "the start-up is left out";
  absl::StatusOr<LogEntry> back = EntryFromJsonLine(EntryToJsonLine(e));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->compared, "steady_state");
  EXPECT_DOUBLE_EQ(back->before.time_ns, e.before.time_ns);
  EXPECT_TRUE(absl::StrContains(RenderLogTable({*back}), "(steady)")) << RenderLogTable({*back});
  // An entry written before the log said which time it compared: end to end.
  absl::StatusOr<LogEntry> old = EntryFromJsonLine(
      R"({"date":"2026-12-03T08:20:23Z","change":"c","before":{"traces":["a"],"end_to_end_ns":437151953,)"
      R"("gpu_busy_share":0.3,"kernel_time_ns":1,"top_finding":"none"},"after":{"traces":["b"],)"
      R"("end_to_end_ns":231618105,"gpu_busy_share":0.8,"kernel_time_ns":1,"top_finding":"none"},)"
      R"("verdict":"helped","conclusion":"x"})");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->compared, "end_to_end");
  EXPECT_DOUBLE_EQ(old->before.time_ns, 437151953);
  EXPECT_TRUE(absl::StrContains(RenderLogTable({*old}), "437.152 ms -> 231.618 ms (end to end)"));
}

TEST(TuningLogTest, BadLineIsNamed) {
  const std::string path = TempLog(".jsonl");
  LogEntry entry;
  entry.date = "2024-12-03T07:30:00Z";
  entry.change = "x";
  entry.verdict = "helped";
  entry.conclusion = "c";
  std::ofstream(path) << EntryToJsonLine(entry) << "\n\n"
                      << "{not json\n";
  absl::StatusOr<std::vector<LogEntry>> read = ReadJsonLog(path);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(absl::StrContains(read.status().message(), ":3: ")) << read.status();
  EXPECT_EQ(ReadJsonLog(TempLog(".jsonl")).status().code(), absl::StatusCode::kNotFound);
}

TEST(TuningLogTest, MarkdownTableWithOneHeader) {
  const Runs r = LaunchLoopFused();
  const std::string path = TempLog(".md");
  EXPECT_TRUE(IsMarkdownLog(path));
  EXPECT_FALSE(IsMarkdownLog("log.jsonl"));
  ASSERT_TRUE(AppendLogEntry(path, MakeLogEntry(r.diff, r.base, r.next, "a | b", kWhen)).ok());
  ASSERT_TRUE(AppendLogEntry(path, MakeLogEntry(r.diff, r.base, r.next, "second\nline", kWhen)).ok());
  const std::vector<std::string> lines = absl::StrSplit(ReadFile(path), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(absl::StartsWith(lines[0], "| date | change |"));
  EXPECT_TRUE(absl::StartsWith(lines[1], "| --- |"));
  EXPECT_TRUE(absl::StartsWith(lines[2],
                               "| 2024-12-03T07:30:00Z | a \\| b | 8.005 ms -> 1.621 ms (end to end) | 20.0% -> 100.0% |"))
      << lines[2];
  EXPECT_TRUE(absl::StrContains(lines[3], "| second line |")) << lines[3];
}

}  // namespace
}  // namespace cuscope::report
