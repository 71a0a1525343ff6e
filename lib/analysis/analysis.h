// What `cuscope analyze` produces for one trace: the summary, the baseline, the ranked findings,
// the supporting tables, the warnings about the trace itself, the kernel verdicts, the GPU counters
// and the top-down. Built by Analyze (analyzer.h); rendered by analysis_text.h (for people) and
// report_proto.h (the report.proto schema, for pipelines).
#ifndef CUSCOPE_LIB_ANALYSIS_ANALYSIS_H_
#define CUSCOPE_LIB_ANALYSIS_ANALYSIS_H_

#include <string>
#include <vector>

#include "cuscope/v1/report.pb.h"
#include "lib/analysis/baseline.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/gpu_counters.h"
#include "lib/analysis/kernel_internals.h"
#include "lib/analysis/table.h"
#include "lib/analysis/top_down_report.h"

namespace cuscope::analysis {

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

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_ANALYSIS_H_
