// The catalogue of reports `cuscope stats --report` builds: which exist, in the order they are
// documented, and the builder of each (the summary tables of tables.h and `gpu_metrics` of
// gpu_counters.h).
#ifndef CUSCOPE_LIB_ANALYSIS_REPORT_CATALOGUE_H_
#define CUSCOPE_LIB_ANALYSIS_REPORT_CATALOGUE_H_

#include <optional>
#include <string_view>
#include <vector>

#include "lib/analysis/table.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

// The report names `cuscope stats --report` accepts, in the order they are documented.
const std::vector<std::string_view>& ReportNames();
// The named report built over the timeline; nullopt for a name that is not in ReportNames().
std::optional<Table> BuildReport(std::string_view name, const Timeline& timeline);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_REPORT_CATALOGUE_H_
