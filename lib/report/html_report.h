// `cuscope report`: one self-contained HTML file for a trace. The page's CSS and JavaScript are
// inline and written for it (no library, font or network request; their sources are
// lib/report/page/, compiled in); the data it draws is the JSON document of report_data.h in a
// <script type="application/json"> element.
//
// What the page shows: the run and its devices, the ranked findings with their numbers, offenders
// and recommendations, a zoomable and pannable timeline (canvas) of every GPU stream per device and
// every host thread's CUDA calls and NVTX ranges, GPU utilization over time on the same time axis,
// a log-log roofline chart (SVG) of the profiled kernels against the device's DRAM and compute
// roofs, the kernel verdicts, and the summary tables. Script errors are shown in the page's
// #script-errors element; when everything rendered without one, the page sets
// document.body.dataset.rendered = "ok" ("error" otherwise), which the browser test reads.
#ifndef CUSCOPE_LIB_REPORT_HTML_REPORT_H_
#define CUSCOPE_LIB_REPORT_HTML_REPORT_H_

#include <string>
#include <string_view>

#include "lib/analysis/analyzer.h"
#include "lib/core/trace.h"
#include "lib/report/report_data.h"

namespace cuscope::report {

// Text for HTML element content and attribute values: & < > " ' as character references.
std::string HtmlEscape(std::string_view text);

// The page around an already built JSON document. Any '<' in `data_json` (valid JSON has it only
// inside strings) is written as \u003c, so the document cannot end the <script> element early.
std::string RenderHtmlPage(std::string_view data_json, std::string_view title);

// The whole report for a trace's timeline and the analysis of it (built with the tables included).
std::string RenderHtmlReport(const analysis::Timeline& timeline, const analysis::Analysis& analysis,
                             const std::string& trace_path, const ReportDataOptions& options = ReportDataOptions());

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_HTML_REPORT_H_
