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

// With call stacks: the hot kernel's main launch site in the headline, and each site of the top
// kernels as an offender. Without them (the negative control above), no such words.
TEST(HotKernelsRule, WithStacksTheHotKernelNamesWhereItWasLaunchedFrom) {
  SyntheticTrace s;
  const std::pair<std::string, std::string> train = {"/opt/app/bin/trainer", "_ZN5model5trainEv"};
  const std::pair<std::string, std::string> eval = {"/opt/app/bin/trainer", "_ZN5model8evaluateEv"};
  for (int i = 0; i < 3; ++i) {
    const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 300.0 * i, 5);
    s.Kernel("gemm", 300.0 * i + 10, 200, 7, corr);
    s.LaunchStack(corr, {{"/lib/libcudart.so.13", "cudaLaunchKernel"}, train});
  }
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 1000, 5);
  s.Kernel("gemm", 1010, 200, 7, corr);
  s.LaunchStack(corr, {eval});
  s.Kernel("relu", 1300, 100);
  const auto f = RunRule(s, HotKernelsRule, "hot.kernels");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].headline.find("gemm launched mostly from model::train (trainer) (75.0% of its launches' time with "
                               "a stack)"),
            std::string::npos)
      << f[0].headline;
  int sites = 0;
  for (const Offender& o : f[0].offenders) {
    if (o.kind != "launch site") continue;
    ++sites;
    if (sites == 1) {
      EXPECT_EQ(o.name, "model::train (trainer) launches gemm");
      EXPECT_EQ(o.count, 3u);
      EXPECT_EQ(o.time_ns, 600'000u);
    }
  }
  EXPECT_EQ(sites, 2);
  SyntheticTrace plain;
  plain.Kernel("gemm", 0, 800);
  const auto without = RunRule(plain, HotKernelsRule, "hot.kernels");
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(without[0].headline.find("launched"), std::string::npos);
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
