// `cuscope analyze` as a function: the timeline, every rule, findings ranked, the supporting
// tables, and the renderings (text for people, the report.proto schema as JSON for pipelines).
#ifndef CUSCOPE_LIB_ANALYSIS_ANALYZER_H_
#define CUSCOPE_LIB_ANALYSIS_ANALYZER_H_

#include <string>
#include <vector>

#include "cuscope/v1/report.pb.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/kernel_internals.h"
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

struct Analysis {
  v1::TraceSummary summary;
  std::vector<Finding> findings;  // ranked
  std::vector<Table> tables;
  std::vector<std::string> warnings;
  // Kernel internals: a verdict per profiled kernel group, and the time-weighted summary.
  std::vector<KernelVerdict> kernel_verdicts;
  KernelInternalsSummary kernel_internals;
  // True when no finding is a warning or an error.
  bool healthy() const;
  Severity worst() const;
};

// Runs every rule over the timeline. Findings are ranked by severity, then recoverable time.
std::vector<Finding> RunRules(const Timeline& timeline, const Thresholds& thresholds);
Analysis Analyze(const core::Trace& trace, const AnalyzeOptions& options);

std::string RenderAnalysisText(const Analysis& analysis, const std::string& trace_path, size_t top_rows);
v1::Report ToReport(const Analysis& analysis, const std::string& trace_path);
std::string RenderAnalysisJson(const Analysis& analysis, const std::string& trace_path);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_ANALYZER_H_
