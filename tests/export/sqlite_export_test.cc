// `cuscope export --format sqlite`: the nsys tables hold what cuscope's reports count (nsys's own
// report queries, run on the database, give the rows of `cuscope stats` on every shipped trace), the
// time base and thread ids decode as nsys documents them, NVTX ranges are one row each, replays and
// findings land in cuscope's tables, and the output file follows the rule of every output.
#include <dirent.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "lib/analysis/analysis_text.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/tables.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"
#include "lib/export/sqlite_exporter.h"
#include "tests/export/export_test_trace.h"

namespace cuscope::exporter::testing {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// Every row of `sql`'s result, each cell as SQLite prints it ("" for NULL).
Rows Query(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  Rows rows;
  sqlite3_stmt* stmt = nullptr;
  const char* tail = sql.c_str();
  EXPECT_EQ(sqlite3_prepare_v2(db, tail, -1, &stmt, &tail), SQLITE_OK) << sqlite3_errmsg(db) << "\n" << sql;
  while (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW) {
    std::vector<std::string>& row = rows.emplace_back();
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const unsigned char* text = sqlite3_column_text(stmt, i);
      row.emplace_back(text != nullptr ? reinterpret_cast<const char*>(text) : "");
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

std::string One(const std::string& db, const std::string& sql) {
  const Rows rows = Query(db, sql);
  return rows.size() == 1 && rows[0].size() == 1 ? rows[0][0] : "(not one value)";
}

std::string ReadSql(const std::string& name) {
  std::ifstream in(std::string(CUSCOPE_SOURCE_DIR) + "/examples/sql/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Export(const std::string& trace, bool findings = true) {
  const std::string out = TempPath(".sqlite");
  SqliteExportOptions options;
  options.findings = findings;
  absl::StatusOr<SqliteExportSummary> summary = ExportToSqlite(trace, out, options);
  EXPECT_TRUE(summary.ok()) << summary.status();
  return out;
}

// Rows keyed by their last cell (the name), the other cells compared as numbers: SQLite prints a
// rounded value as 768.0 where the table has "768.0", and both agree to the printed digit.
void ExpectSameRows(const Rows& table, const Rows& query, const std::string& what) {
  std::map<std::string, std::vector<std::string>> by_name;
  for (const auto& row : query) by_name[row.back()] = row;
  ASSERT_EQ(by_name.size(), query.size()) << what << ": a name twice in the query's rows";
  ASSERT_EQ(table.size(), query.size()) << what;
  for (const auto& row : table) {
    auto it = by_name.find(row.back());
    ASSERT_NE(it, by_name.end()) << what << ": no query row for " << row.back();
    ASSERT_EQ(it->second.size(), row.size()) << what;
    for (size_t i = 0; i + 1 < row.size(); ++i) {
      double a = 0, b = 0;
      ASSERT_TRUE(absl::SimpleAtod(row[i], &a) && absl::SimpleAtod(it->second[i], &b)) << row[i] << " " << it->second[i];
      EXPECT_NEAR(a, b, 0.051) << what << ", " << row.back() << ", column " << i;
    }
  }
}

TEST(SqliteExportTest, NsysReportQueriesGiveTheRowsOfCuscopeStatsOnEveryShippedTrace) {
  const std::string kernel_sql =
      absl::StrReplaceAll(ReadSql("cuda_gpu_kern_sum.sql"), {{"k.shortName", "k.mangledName"}});
  const std::string api_sql = ReadSql("cuda_api_sum.sql");
  ASSERT_NE(kernel_sql.find("mangledName"), std::string::npos);
  int traces = 0;
  for (const char* folder : {"", "/h200_examples", "/h200_examples_earlier", "/h100"}) {
    const std::string dir = absl::StrCat(CUSCOPE_TRACES_DIR, folder);
    DIR* d = ::opendir(dir.c_str());
    ASSERT_NE(d, nullptr) << dir;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      if (absl::EndsWith(e->d_name, ".cuscope")) names.push_back(e->d_name);
    }
    ::closedir(d);
    for (const std::string& name : names) {
      const std::string path = absl::StrCat(dir, "/", name);
      absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
      ASSERT_TRUE(trace.ok()) << trace.status();
      const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
      const std::string db = Export(path, /*findings=*/false);
      ExpectSameRows(analysis::KernelSummary(timeline).rows, Query(db, kernel_sql), absl::StrCat(path, " kernels"));
      ExpectSameRows(analysis::ApiSummary(timeline).rows, Query(db, api_sql), absl::StrCat(path, " API"));
      ++traces;
    }
  }
  EXPECT_EQ(traces, 48);  // every shipped trace
}

class SqliteScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildScenario(&trace_);
    path_ = trace_.Write();
    db_ = Export(path_);
  }
  TestTrace trace_;
  std::string path_, db_;
};

TEST_F(SqliteScenarioTest, TimesAreNanosecondsFromTheSessionStartAndThreadsDecodeAsNsysSays) {
  // kernel(float*) [5000, 15000] after the session's start kT0; thread 100 of pid 42.
  EXPECT_EQ(One(db_, "SELECT start || ',' || \"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                     "ON s.id = k.demangledName WHERE s.value = 'kernel(float*)' ORDER BY start LIMIT 1"),
            "5000,15000");
  EXPECT_EQ(One(db_, "SELECT DISTINCT (globalTid / 0x1000000 % 0x1000000) || ',' || (globalTid % 0x1000000) "
                     "FROM CUPTI_ACTIVITY_KIND_RUNTIME"),
            "42,100");
  EXPECT_EQ(One(db_, "SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"), absl::StrCat(42ll << 24));
  EXPECT_EQ(One(db_, "SELECT pid || ',' || name FROM PROCESSES"), "42,app");
  EXPECT_EQ(One(db_, "SELECT value FROM META_DATA_EXPORT WHERE name = 'CUSCOPE_SESSION_START_CUPTI_NS'"),
            absl::StrCat(kT0));
  // Kernels join their launch calls on correlation id and process, as nsys's reports join them.
  EXPECT_EQ(One(db_, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                     "ON k.correlationId = r.correlationId AND k.globalPid = (r.globalTid & 0xFFFFFFFFFF000000) "
                     "JOIN StringIds s ON s.id = r.nameId WHERE s.value = 'cudaLaunchKernel'"),
            "2");
}

TEST_F(SqliteScenarioTest, DriverCallsAreRuntimeRowsOfEventClassOne) {
  EXPECT_EQ(One(db_, "SELECT eventClass FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                     "WHERE s.value = 'cuLaunchKernel'"),
            "1");
  EXPECT_EQ(One(db_, "SELECT DISTINCT eventClass FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                     "ON s.id = r.nameId WHERE s.value = 'cudaLaunchKernel'"),
            "0");
}

TEST_F(SqliteScenarioTest, AnNvtxRangeIsOneRowAndAMarkHasNoEnd) {
  // The name as nsys's reports read it: the registered string (textId) or the text.
  EXPECT_EQ(Query(db_, "SELECT coalesce(s.value, n.text), start, \"end\", eventType FROM NVTX_EVENTS n "
                       "LEFT JOIN StringIds s ON s.id = n.textId WHERE eventType IN (34, 59, 60) ORDER BY start"),
            (Rows{{"outer", "500", "40000", "59"}, {"inner", "900", "3500", "59"}, {"checkpoint", "4000", "", "34"}}));
}

TEST_F(SqliteScenarioTest, ReplayedLaunchesAndFindingsHaveTablesOfTheirOwn) {
  EXPECT_EQ(One(db_, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                     "WHERE s.value = 'profiled'"),
            "0");
  EXPECT_EQ(One(db_, "SELECT s.value FROM CUSCOPE_KERNEL_REPLAYS k JOIN StringIds s ON s.id = k.shortName"),
            "profiled");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM CUSCOPE_KERNEL_METRICS m JOIN StringIds s ON s.id = m.kernelName"), "1");
  // The findings of `cuscope analyze`, ranked, with their numbers.
  absl::StatusOr<core::Trace> trace = core::LoadTrace(path_);
  ASSERT_TRUE(trace.ok());
  const analysis::Analysis analysis = analysis::Analyze(*trace, analysis::AnalyzeOptions());
  ASSERT_FALSE(analysis.findings.empty());
  EXPECT_EQ(One(db_, "SELECT count(*) FROM CUSCOPE_FINDINGS"), absl::StrCat(analysis.findings.size()));
  EXPECT_EQ(One(db_, "SELECT ruleId FROM CUSCOPE_FINDINGS WHERE rank = 1"), analysis.findings[0].rule_id);
  EXPECT_EQ(One(db_, "SELECT count(*) FROM CUSCOPE_FINDING_NUMBERS WHERE findingId = 1"),
            absl::StrCat(analysis.findings[0].numbers.size()));
}

TEST_F(SqliteScenarioTest, WithoutFindingsTheTablesAreThereAndEmpty) {
  const std::string db = Export(path_, /*findings=*/false);
  EXPECT_EQ(One(db, "SELECT count(*) FROM CUSCOPE_FINDINGS"), "0");
  EXPECT_EQ(One(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), "5");
}

TEST_F(SqliteScenarioTest, AnExistingOutputIsReplacedOnlyWithForceAndNothingIsLeftBehind) {
  SqliteExportOptions options;
  absl::StatusOr<SqliteExportSummary> again = ExportToSqlite(path_, db_, options);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("-f/--force-overwrite"), std::string::npos) << again.status();
  options.overwrite = true;
  EXPECT_TRUE(ExportToSqlite(path_, db_, options).ok());
  // A symbolic link at the output is refused, not followed.
  const std::string link = TempPath(".sqlite");
  const std::string target = TempPath(".txt");
  { std::ofstream(target) << "keep"; }
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  options.overwrite = false;
  EXPECT_FALSE(ExportToSqlite(path_, link, options).ok());
  EXPECT_EQ(ReadFile(target), "keep");
  // A trace that cannot be read leaves no database and no scratch file.
  const std::string missing_out = TempPath(".sqlite");
  EXPECT_FALSE(ExportToSqlite(TempPath(".cuscope"), missing_out, options).ok());
  struct stat st;
  EXPECT_NE(::stat(missing_out.c_str(), &st), 0);
  const std::string dir = missing_out.substr(0, missing_out.rfind('/'));
  const std::string scratch_prefix = "." + missing_out.substr(missing_out.rfind('/') + 1);
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      EXPECT_NE(std::string(e->d_name).rfind(scratch_prefix, 0), 0u) << "left behind: " << e->d_name;
    }
    ::closedir(d);
  }
}

// The top-down table holds what analyze shows: the hot kernels measured inside the timeline window.
// Monitor intervals keep whether their figures are estimates (a duty cycle), with the time recorded,
// the windows and the bounds; recorded whole, those cells are NULL.
TEST(SqliteExportTest, MonitorIntervalsSayWhichFiguresAreEstimates) {
  TestTrace t;
  v1::MonitorInterval whole;
  whole.set_start_ns(kT0);
  whole.set_end_ns(kT0 + 1'000'000'000);
  whole.add_devices()->set_busy_ns(400'000'000);
  t.MonitorInterval(whole);
  v1::MonitorInterval sampled = whole;
  sampled.set_start_ns(kT0 + 1'000'000'000);
  sampled.set_end_ns(kT0 + 2'000'000'000);
  sampled.set_estimated(true);
  sampled.set_observed_ns(80'000'000);
  sampled.set_sample_windows(8);
  sampled.set_count_bound(0.03);
  sampled.mutable_devices(0)->set_observed_ns(81'000'000);
  sampled.mutable_devices(0)->set_busy_share_bound(1.25);
  t.MonitorInterval(sampled);
  const std::string db = Export(t.Write(), /*findings=*/false);
  EXPECT_EQ(Query(db, "SELECT estimated, observed, sampleWindows, countBound FROM CUSCOPE_MONITOR_INTERVALS ORDER BY id"),
            (Rows{{"0", "", "", ""}, {"1", "80000000", "8", "0.03"}}));
  EXPECT_EQ(Query(db, "SELECT observed, busyShareBound FROM CUSCOPE_MONITOR_DEVICES ORDER BY intervalId"),
            (Rows{{"", ""}, {"81000000", "1.25"}}));
}

TEST(SqliteExportTest, TheTopDownTableIsAnalyzes) {
  const std::string path = absl::StrCat(CUSCOPE_TRACES_DIR, "/h200_torch_top_down.cuscope");
  absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  const analysis::Analysis analysis = analysis::Analyze(*trace, analysis::AnalyzeOptions());
  ASSERT_EQ(analysis.top_down.choices.size(), 1u);
  const analysis::TopDownChoice& choice = analysis.top_down.choices[0];
  const std::string db = Export(path, false);
  EXPECT_EQ(One(db, "SELECT windowLaunches || ',' || windowGpuTime FROM CUSCOPE_TOP_DOWN WHERE rank = 0"),
            absl::StrCat(choice.kernels[0].launches, ",", choice.kernels[0].window_ns));
  EXPECT_EQ(choice.kernels[0].launches, 766u);  // inside the window, not the collector's 1,073
  EXPECT_EQ(One(db, "SELECT DISTINCT windowKernelTime FROM CUSCOPE_TOP_DOWN"), absl::StrCat(choice.window_kernel_ns));
  EXPECT_EQ(choice.window_kernel_ns, analysis.baseline.kernel_ns);
}

// One time base: a finding's span is the same nanoseconds from the session start in analyze's text
// and in the database (the top-down trace, whose session started before its first record).
TEST(SqliteExportTest, AnalyzeAndTheDatabaseGiveTimesFromTheSessionStart) {
  const std::string path = absl::StrCat(CUSCOPE_TRACES_DIR, "/h200_torch_top_down.cuscope");
  absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  const analysis::Analysis analysis = analysis::Analyze(*trace, analysis::AnalyzeOptions());
  const uint64_t origin = analysis.summary.session_start_ns();
  ASSERT_EQ(origin, trace->header.session().start_time_ns());
  const analysis::Finding* with_span = nullptr;
  int rank = 0;
  for (const analysis::Finding& f : analysis.findings) {
    ++rank;
    if (!f.spans.empty()) {
      with_span = &f;
      break;
    }
  }
  ASSERT_NE(with_span, nullptr);
  const analysis::Span& span = with_span->spans[0];
  const std::string text = analysis::RenderAnalysisText(analysis, path, 10, core::KernelNameStyle::kBase);
  EXPECT_NE(text.find(absl::StrCat("[", analysis::FormatSinceStart(span.begin, origin), " .. ",
                                   analysis::FormatSinceStart(span.end, origin), "] from the session start")),
            std::string::npos);
  const std::string db = Export(path);
  EXPECT_EQ(One(db, absl::StrCat("SELECT s.start || ',' || s.\"end\" FROM CUSCOPE_FINDING_SPANS s JOIN CUSCOPE_FINDINGS f "
                                 "ON f.id = s.findingId WHERE f.rank = ", rank, " LIMIT 1")),
            absl::StrCat(span.begin - origin, ",", span.end - origin));
  EXPECT_EQ(analysis::FormatSinceStart(origin + 96'920'123, origin), "+96.920123 ms");
  EXPECT_EQ(analysis::FormatSinceStart(origin - 5, origin), "-0.000005 ms");
}

}  // namespace
}  // namespace cuscope::exporter::testing
