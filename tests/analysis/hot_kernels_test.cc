// The hot.kernels rule: a positive case, a negative control, and both sides of each threshold, on
// synthetic timelines.
#include "lib/analysis/rules/rules.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/analysis/rule_test_support.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::RunRule;
using cuscope::testing::With;

TEST(HotKernelsRule, DominantKernelLeadsTheList) {
  SyntheticTrace s;
  s.Kernel("gemm", 0, 800);
  s.Kernel("relu", 800, 200);
  const auto f = RunRule(s, HotKernelsRule, "hot.kernels");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  ASSERT_FALSE(f[0].offenders.empty());
  EXPECT_EQ(f[0].offenders[0].name, "gemm");
  EXPECT_NEAR(*f[0].number("top_share"), 0.8, 1e-9);
}

TEST(HotKernelsRule, EvenSpreadThresholdBothSides) {
  auto even = [](SyntheticTrace& s) {
    for (int i = 0; i < 10; ++i) s.Kernel(absl::StrCat("k", i), i * 100.0, 100);
  };
  SyntheticTrace spread;
  even(spread);
  EXPECT_TRUE(RunRule(spread, HotKernelsRule, "hot.kernels").empty());
  SyntheticTrace lowered;
  even(lowered);
  EXPECT_EQ(RunRule(lowered, HotKernelsRule, "hot.kernels", With({"hot_kernel_min_share=0.1"})).size(), 1u);
}

}  // namespace
}  // namespace cuscope::analysis
