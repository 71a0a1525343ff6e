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
std::string RenderFindingText(const Finding& finding, int rank);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_ANALYSIS_TEXT_H_
