#include "lib/report/rank_set_page.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/report/analysis_json.h"
#include "lib/report/html_report.h"
#include "lib/report/json_writer.h"

namespace cuscope::report {
namespace {

// The hosts in the order the ranks first name them, at most a few and a count of the rest: a
// thousand-rank job has a hundred hosts, and the header line is one line.
std::string HostsOf(const ranks::RankSetReport& report) {
  constexpr size_t kNamed = 4;
  std::set<std::string> seen;
  std::vector<std::string> named;
  for (const ranks::RankRow& row : report.ranks) {
    if (row.id.host.empty() || !seen.insert(row.id.host).second) continue;
    if (named.size() < kNamed) named.push_back(row.id.host);
  }
  std::string hosts = absl::StrJoin(named, ", ");
  if (seen.size() > named.size()) absl::StrAppend(&hosts, " and ", seen.size() - named.size(), " more");
  return hosts;
}

void WriteRanks(const ranks::RankSetReport& report, JsonWriter* w) {
  w->Key("ranks").BeginObject().Field("matched_instances", report.matched_instances);
  w->Field("step_name", report.step_name).Field("matched_steps", report.matched_steps);
  w->Key("rows").BeginArray();
  for (const ranks::RankRow& row : report.ranks) {
    w->BeginObject().Field("label", row.id.Label()).Field("rank", static_cast<int64_t>(row.id.rank));
    w->Field("local_rank", static_cast<int64_t>(row.id.local_rank)).Field("host", row.id.host);
    w->Field("pid", static_cast<uint64_t>(row.id.pid)).Field("path", row.id.path);
    w->Field("clock_aligned", row.clock_aligned).Field("truncated", row.truncated);
    w->Field("active_ns", row.active_ns).Field("kernel_ns", row.kernel_ns);
    w->Field("communication_ns", row.communication_ns).Field("overlapped_ns", row.overlapped_ns);
    w->Field("exposed_ns", row.exposed_ns).Field("collectives", row.collectives);
    w->Field("last_arrivals", row.last_arrivals).Field("late_ns", row.late_ns).Field("steps", row.steps);
    w->Field("step_median_ns", row.step_median_ns).Field("step_work_median_ns", row.step_work_median_ns);
    w->EndObject();
  }
  w->EndArray().EndObject();
}

}  // namespace

std::string RankSetTitle(const ranks::RankSetReport& report) {
  std::string title = absl::StrCat(report.ranks.size(), report.ranks.size() == 1 ? " rank trace" : " rank traces");
  if (!report.ranks.empty()) {
    const ranks::RankIdentity& first = report.ranks.front().id;
    if (!first.job_id.empty()) absl::StrAppend(&title, ", job ", first.job_id);
    if (!first.launcher.empty()) absl::StrAppend(&title, " (", first.launcher, ")");
  }
  return title;
}

std::string BuildRankSetReportData(const ranks::RankSetReport& report, size_t max_table_rows) {
  JsonWriter w;
  w.BeginObject().Field("format", "cuscope-rank-report/1").Field("trace", RankSetTitle(report));
  w.Key("session").BeginObject().Field("host", HostsOf(report)).Field("pid", uint64_t{0}).Field("command", "");
  w.Field("library_version", "").Field("origin_ns", "0").EndObject();
  w.Key("devices").BeginArray().EndArray();
  w.Key("summary").Null();
  w.Key("warnings").BeginArray();
  for (const std::string& warning : report.warnings) w.String(warning);
  w.EndArray();
  WriteFindingsJson(report.findings, 0, /*with_spans=*/false, &w);
  w.Key("kernel_verdicts").BeginArray().EndArray();
  w.Key("roofline").Null();
  WriteTablesJson(report.tables, max_table_rows, &w);
  w.Key("timeline").Null().Key("utilization").Null().Key("call_paths").Null();
  WriteRanks(report, &w);
  w.EndObject();
  return w.Take();
}

std::string RenderRankSetHtmlReport(const ranks::RankSetReport& report, size_t max_table_rows) {
  return RenderHtmlPage(BuildRankSetReportData(report, max_table_rows),
                        absl::StrCat("cuscope report: ", RankSetTitle(report)));
}

}  // namespace cuscope::report
