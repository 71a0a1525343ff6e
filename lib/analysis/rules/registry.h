// The rule registry: the one list of the rules Analyze runs, in the order it runs them. Findings of
// equal rank keep this order (RunRules sorts stably), and warnings are reported in it.
#ifndef CUSCOPE_LIB_ANALYSIS_RULES_REGISTRY_H_
#define CUSCOPE_LIB_ANALYSIS_RULES_REGISTRY_H_

#include <span>
#include <string>
#include <vector>

#include "lib/analysis/finding.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

// A rule that judges the program: zero or more findings.
using FindingRule = std::vector<Finding> (*)(const Timeline& timeline, const Thresholds& thresholds);
// A rule that judges the trace: zero or more warnings, which say how far the findings can be trusted.
using WarningRule = std::vector<std::string> (*)(const Timeline& timeline);

std::span<const FindingRule> FindingRules();
std::span<const WarningRule> WarningRules();

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_RULES_REGISTRY_H_
