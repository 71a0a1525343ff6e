#include "tests/analysis/rule_test_support.h"

#include <utility>

#include "gtest/gtest.h"

namespace cuscope::testing {

std::vector<analysis::Finding> RunRule(
    SyntheticTrace& s,
    std::vector<analysis::Finding> (*rule)(const analysis::Timeline&, const analysis::Thresholds&),
    const std::string& rule_id, const analysis::Thresholds& thresholds) {
  const core::Trace trace = s.Load();
  const analysis::Timeline timeline = analysis::Timeline::Build(trace);
  std::vector<analysis::Finding> out;
  for (analysis::Finding& f : rule(timeline, thresholds)) {
    if (f.rule_id == rule_id) out.push_back(std::move(f));
  }
  return out;
}

analysis::Thresholds With(std::initializer_list<std::string> overrides) {
  analysis::Thresholds t;
  for (const std::string& o : overrides) EXPECT_TRUE(analysis::ApplyThresholdOverride(o, &t).ok()) << o;
  return t;
}

bool HasOffender(const analysis::Finding& f, const std::string& name) {
  for (const analysis::Offender& o : f.offenders) {
    if (o.name.find(name) != std::string::npos) return true;
  }
  return false;
}

}  // namespace cuscope::testing
