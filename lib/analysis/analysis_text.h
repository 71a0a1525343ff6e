// The text report of `cuscope analyze`, for people. It opens with the baseline (baseline.h), then
// the warnings and the devices' busy lines, the ranked findings with the kernel internals under the
// hot-kernel list (in a top-down trace, the top-down's hot kernels and their verdicts instead,
// top_down.h), the GPU counters (gpu_counters.h) and the tables.
#ifndef CUSCOPE_LIB_ANALYSIS_ANALYSIS_TEXT_H_
#define CUSCOPE_LIB_ANALYSIS_ANALYSIS_TEXT_H_

#include <cstddef>
#include <string>

#include "lib/analysis/analysis.h"
#include "lib/core/kernel_names.h"

namespace cuscope::analysis {

// `top_rows` rows per supporting table. Names from the trace are escaped for the terminal; kernel
// names are shown in `names` (short base names by default).
std::string RenderAnalysisText(const Analysis& analysis, const std::string& trace_path, size_t top_rows,
                               core::KernelNameStyle names = core::KernelNameStyle::kBase);

// One finding as the report lists it: "N. [severity] rule: headline", then what it could recover,
// its numbers, offenders, spans and advice, each on a line of its own; names escaped.
// Times of spans are given from `origin` (the session's start), exact to the nanosecond; with origin
// 0 as CUPTI's absolute nanoseconds (a rank set's findings, whose traces share one clock).
std::string RenderFindingText(const Finding& finding, int rank, uint64_t origin = 0);
// A CUPTI time from `origin` for people: "+96.920123 ms" (exact to the ns; "-" before it).
std::string FormatSinceStart(uint64_t time, uint64_t origin);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_ANALYSIS_TEXT_H_
