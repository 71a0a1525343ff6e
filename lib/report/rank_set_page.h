// `cuscope report RANK_TRACE...`: the HTML page for a job's rank traces analyzed together
// (lib/ranks/rank_set.h). The same page as one trace's report (html_report.h), drawn from a
// document of another format: the set's findings and tables, and a chart of the ranks side by side
// (median step time and GPU work per step, communication exposed and overlapped, late arrivals at
// collectives). There is no timeline on it: the ranks' events are not kept (`cuscope export
// RANK_TRACE... -o FILE` puts them on one Perfetto timeline).
#ifndef CUSCOPE_LIB_REPORT_RANK_SET_PAGE_H_
#define CUSCOPE_LIB_REPORT_RANK_SET_PAGE_H_

#include <cstddef>
#include <string>

#include "lib/ranks/rank_set.h"

namespace cuscope::report {

// The JSON document, an object with:
//   format ("cuscope-rank-report/1"), trace (what the set is: "4 rank traces, job 7 (torchrun)"),
//   session {host (the hosts, joined), pid 0, command "", library_version "", origin_ns "0"},
//   devices [], summary null, warnings [..], findings and tables as analysis_json.h writes them
//   (no spans), kernel_verdicts [], roofline null, timeline null, utilization null, call_paths null,
//   ranks {matched_instances, step_name, matched_steps, rows [{label, rank, local_rank, host, pid,
//   path, clock_aligned, truncated, active_ns, kernel_ns, communication_ns, overlapped_ns,
//   exposed_ns, collectives, last_arrivals, late_ns, steps, step_median_ns, step_work_median_ns}]}.
// The rows are the set's, by rank; `max_table_rows` bounds each table's rows (not the chart's).
std::string BuildRankSetReportData(const ranks::RankSetReport& report, size_t max_table_rows = 200);

// "4 rank traces, job 7 (torchrun)": the set as the page's title names it.
std::string RankSetTitle(const ranks::RankSetReport& report);

// The whole page.
std::string RenderRankSetHtmlReport(const ranks::RankSetReport& report, size_t max_table_rows = 200);

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_RANK_SET_PAGE_H_
