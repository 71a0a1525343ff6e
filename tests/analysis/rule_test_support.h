// Helpers shared by the rule tests (one test file per rule): run one rule over a synthetic trace,
// thresholds with overrides, and offender lookup.
#ifndef CUSCOPE_TESTS_ANALYSIS_RULE_TEST_SUPPORT_H_
#define CUSCOPE_TESTS_ANALYSIS_RULE_TEST_SUPPORT_H_

#include <initializer_list>
#include <string>
#include <vector>

#include "lib/analysis/finding.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::testing {

// The findings of `rule` over the trace whose rule id is `rule_id` (a rule may raise several kinds).
std::vector<analysis::Finding> RunRule(
    SyntheticTrace& s,
    std::vector<analysis::Finding> (*rule)(const analysis::Timeline&, const analysis::Thresholds&),
    const std::string& rule_id, const analysis::Thresholds& thresholds = analysis::Thresholds());
// The default thresholds with "name=value" overrides; a bad override fails the test.
analysis::Thresholds With(std::initializer_list<std::string> overrides);
// Whether an offender's name contains `name`.
bool HasOffender(const analysis::Finding& f, const std::string& name);

}  // namespace cuscope::testing

#endif  // CUSCOPE_TESTS_ANALYSIS_RULE_TEST_SUPPORT_H_
