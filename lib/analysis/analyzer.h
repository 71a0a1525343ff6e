// `cuscope analyze` as a function: the timeline, every rule, findings ranked, the supporting
// tables, and the renderings (text for people, the report.proto schema as JSON for pipelines).
//
// The text report opens with the baseline (baseline.h), then the warnings and the devices' busy
// lines, the ranked findings with the kernel internals under the hot-kernel list (in a top-down
// trace, the top-down's hot kernels and their verdicts instead, top_down.h), the GPU counters
// (gpu_counters.h) and the tables. report.proto has no messages of its own for the baseline, the
// counters over time and the top-down list: the JSON carries them as tables named "baseline",
// "gpu_utilization_over_time" and "top_down", next to "gpu_metrics".
#ifndef CUSCOPE_LIB_ANALYSIS_ANALYZER_H_
#define CUSCOPE_LIB_ANALYSIS_ANALYZER_H_

#include <string>
#include <vector>

#include "cuscope/v1/report.pb.h"
#include "lib/analysis/baseline.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/gpu_counters.h"
#include "lib/analysis/kernel_internals.h"
#include "lib/analysis/tables.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"
#include "lib/analysis/top_down.h"
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
  // What a tuning loop compares between runs: window, kernel time, utilization, launch rate.
  Baseline baseline;
  std::vector<Finding> findings;  // ranked
  std::vector<Table> tables;
  std::vector<std::string> warnings;
  // Kernel internals: a verdict per profiled kernel group, and the time-weighted summary.
  std::vector<KernelVerdict> kernel_verdicts;
  KernelInternalsSummary kernel_internals;
  // GPU counters sampled over time (empty without samples).
  GpuCountersReport gpu_counters;
  // The one-run top-down's hot kernels and their verdicts (present only in a top-down trace).
  TopDownReport top_down;
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

// The baseline, GPU utilization over time and top-down sections as tables, for the outputs that
// carry them that way (the JSON, the HTML report).
std::vector<Table> SectionTables(const Analysis& analysis);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_ANALYZER_H_
