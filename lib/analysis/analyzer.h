// `cuscope analyze` as a function: the timeline, every rule of the registry (rules/registry.h),
// findings ranked, the supporting tables. The result is the Analysis of analysis.h; its renderings
// are RenderAnalysisText (analysis_text.h, for people) and ToReport / RenderAnalysisJson
// (report_proto.h, the report.proto schema for pipelines), included here for the callers that run
// the whole of `cuscope analyze`.
#ifndef CUSCOPE_LIB_ANALYSIS_ANALYZER_H_
#define CUSCOPE_LIB_ANALYSIS_ANALYZER_H_

#include <cstddef>
#include <vector>

#include "lib/analysis/analysis.h"
#include "lib/analysis/analysis_text.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/report_proto.h"
#include "lib/analysis/tables.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"

namespace cuscope::analysis {

struct AnalyzeOptions {
  Thresholds thresholds;
  // Rows per supporting table in the text output.
  size_t top_rows = 10;
  bool include_tables = true;
};

// Runs every finding rule over the timeline. Findings are ranked by severity, then recoverable
// time; ties keep the registry's order.
std::vector<Finding> RunRules(const Timeline& timeline, const Thresholds& thresholds);
// Builds the trace's timeline and analyzes it.
Analysis Analyze(const core::Trace& trace, const AnalyzeOptions& options);
// The same over a timeline already built (it keeps its trace), for callers that draw it too: the
// report page draws the timeline the analysis ran on, not a second one.
Analysis Analyze(const Timeline& timeline, const AnalyzeOptions& options);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_ANALYZER_H_
