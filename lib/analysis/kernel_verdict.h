// The verdict on one profiled kernel group (kernel_internals.h): its averaged metrics read into
// speed-of-light shares, roofline and stall reasons, then the bottleneck, the occupancy verdict,
// what each implies and what to change. Internal to lib/analysis: JudgeKernels groups the launches
// and averages their metrics, then calls Judge on each group.
#ifndef CUSCOPE_LIB_ANALYSIS_KERNEL_VERDICT_H_
#define CUSCOPE_LIB_ANALYSIS_KERNEL_VERDICT_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "lib/analysis/kernel_internals.h"
#include "lib/analysis/thresholds.h"
#include "lib/core/trace.h"

namespace cuscope::analysis::kernel_verdict {

// The metric names the session was asked to collect (its header's config).
using RequestedMetrics = absl::flat_hash_set<std::string>;

// Fills the verdict's figures, bottleneck, occupancy verdict, descriptions and recommendation from
// its averaged metrics (`v.metrics`) and its device in `trace`.
void Judge(KernelVerdict& v, const core::Trace& trace, const RequestedMetrics& requested, const Thresholds& t);

}  // namespace cuscope::analysis::kernel_verdict

#endif  // CUSCOPE_LIB_ANALYSIS_KERNEL_VERDICT_H_
