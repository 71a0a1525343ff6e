// The page of a job's rank traces (`cuscope report RANK_TRACE...`): what its document carries for
// the ranks side by side and the set's findings, with a balanced job as the negative control, and
// the command's handling of several traces.
#include "lib/report/rank_set_page.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "lib/ranks/rank_traces.h"
#include "tests/ranks/rank_job.h"
#include "tests/report/report_test_support.h"

namespace cuscope::report {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using testing::At;
using testing::ReadFile;
using testing::ParseJsonObject;

ranks::RankSetReport AnalyzeJob(const testing::Job& job) {
  ranks::RankTracesOptions options;
  options.jobs = 2;
  absl::StatusOr<ranks::RankSetReport> report = ranks::AnalyzeRankTraces(testing::JobTraces(job), options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : ranks::RankSetReport{};
}

std::vector<std::string> RuleIds(const Struct& data) {
  std::vector<std::string> ids;
  for (const Value& f : At(data, "findings").list_value().values()) {
    ids.push_back(At(f.struct_value(), "rule_id").string_value());
  }
  return ids;
}

TEST(RankSetPageTest, AStragglersRowAndFindingAreOnThePage) {
  testing::Job job;
  job.late_rank = 3;
  job.extra_compute_us = 4'000;
  const Struct data = ParseJsonObject(BuildRankSetReportData(AnalyzeJob(job)));
  EXPECT_EQ(At(data, "format").string_value(), "cuscope-rank-report/1");
  EXPECT_EQ(At(data, "trace").string_value(), "4 rank traces, job job-7 (torchrun)");
  EXPECT_EQ(At(At(data, "session").struct_value(), "host").string_value(), "node-a");
  // No timeline or roofline: the page hides those sections.
  EXPECT_EQ(At(data, "timeline").kind_case(), Value::kNullValue);
  EXPECT_EQ(At(data, "roofline").kind_case(), Value::kNullValue);

  const Struct& ranks = At(data, "ranks").struct_value();
  EXPECT_EQ(At(ranks, "matched_instances").number_value(), 20);
  EXPECT_EQ(At(ranks, "step_name").string_value(), "step");
  const auto& rows = At(ranks, "rows").list_value().values();
  ASSERT_EQ(rows.size(), 4);
  for (int r = 0; r < 4; ++r) {
    const Struct& row = rows[r].struct_value();
    EXPECT_EQ(At(row, "label").string_value(), absl::StrCat("rank ", r));
    EXPECT_TRUE(At(row, "clock_aligned").bool_value());
    // The straggler's median step holds 4 ms more GPU work; it arrives last at every all-reduce.
    EXPECT_NEAR(At(row, "step_work_median_ns").number_value(), r == 3 ? 14e6 : 10e6, 0.01e6) << r;
    EXPECT_EQ(At(row, "last_arrivals").number_value(), r == 3 ? 20 : 0) << r;
    EXPECT_GT(At(row, "communication_ns").number_value(), 0);
  }

  const std::vector<std::string> ids = RuleIds(data);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "ranks.straggler"), ids.end());
  for (const Value& f : At(data, "findings").list_value().values()) {
    const Struct& finding = f.struct_value();
    // Nothing on the page to show a span on.
    EXPECT_EQ(At(finding, "spans").list_value().values_size(), 0);
    if (At(finding, "rule_id").string_value() == "ranks.straggler") {
      EXPECT_TRUE(absl::StrContains(At(finding, "headline").string_value(), "rank 3 is the straggler"));
    }
  }
  // The set's tables, as analyze prints them.
  std::vector<std::string> tables;
  for (const Value& t : At(data, "tables").list_value().values()) {
    tables.push_back(At(t.struct_value(), "name").string_value());
  }
  EXPECT_EQ(tables, (std::vector<std::string>{"ranks", "rank_collectives", "rank_steps"}));
}

TEST(RankSetPageTest, ABalancedJobNamesNoRank) {
  const Struct data = ParseJsonObject(BuildRankSetReportData(AnalyzeJob(testing::Job{})));
  const std::vector<std::string> ids = RuleIds(data);
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "ranks.straggler"), ids.end());
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "ranks.step_imbalance"), ids.end());
  for (const Value& row : At(At(data, "ranks").struct_value(), "rows").list_value().values()) {
    EXPECT_EQ(At(row.struct_value(), "last_arrivals").number_value(), 0);
    EXPECT_NEAR(At(row.struct_value(), "step_work_median_ns").number_value(), 10e6, 0.01e6);
  }
}

TEST(RankSetPageTest, TheTitleNamesTheSetAndItsHosts) {
  const std::vector<std::string> paths = {testing::RankTrace(testing::Job{}, 0),
                                          testing::RankTrace(testing::Job{}, 1, 5e6)};
  ranks::RankTracesOptions options;
  absl::StatusOr<ranks::RankSetReport> report = ranks::AnalyzeRankTraces(paths, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(RankSetTitle(*report), "2 rank traces, job job-7 (torchrun)");
  const Struct data = ParseJsonObject(BuildRankSetReportData(*report));
  EXPECT_EQ(At(At(data, "session").struct_value(), "host").string_value(), "node-a, node-b");
  const std::string page = RenderRankSetHtmlReport(*report);
  EXPECT_TRUE(absl::StrContains(page, "<title>cuscope report: 2 rank traces, job job-7 (torchrun)</title>"));
}

TEST(RankSetPageTest, TheCommandWritesOnePageForSeveralTraces) {
  testing::Job job;
  job.late_rank = 1;
  job.host_gap_us = 3'000;
  const std::vector<std::string> paths = testing::JobTraces(job);
  const std::string out = testing::TempPath("cuscope_rank_page", ".html");
  std::vector<std::string> args = paths;
  // Without -o there is no one name to derive from several traces: refused, nothing written.
  EXPECT_EQ(cli::RunReport(args), 2);
  args.insert(args.end(), {"-o", out, "-j", "2", "--step", "step"});
  ASSERT_EQ(cli::RunReport(args), 0);
  const std::string page = ReadFile(out);
  EXPECT_TRUE(absl::StartsWith(page, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(page, "\"format\":\"cuscope-rank-report/1\""));
  EXPECT_TRUE(absl::StrContains(page, "rank 1 is the straggler"));
  // An existing page is refused without -f, replaced with it.
  EXPECT_EQ(cli::RunReport(args), 2);
  args.push_back("-f");
  EXPECT_EQ(cli::RunReport(args), 0);
  // The options of a set are checked as analyze checks them.
  EXPECT_EQ(cli::RunReport({paths[0], paths[1], "-o", out, "-f", "-j", "0"}), 2);
  // A set whose traces cannot be read leaves no page behind.
  std::remove(out.c_str());
  EXPECT_EQ(cli::RunReport({"/nonexistent/a.cuscope", "/nonexistent/b.cuscope", "-o", out}), 2);
  EXPECT_NE(access(out.c_str(), F_OK), 0);
  std::remove(out.c_str());
}

}  // namespace
}  // namespace cuscope::report
