// Kernel names as people read them: analyze, stats and diff show short base names by default,
// the full demangled or the recorded (mangled) name with --kernel-names; JSON keeps the recorded
// name.
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "tests/analysis/synthetic_trace.h"
#include "tests/cli/capture_command.h"

namespace cuscope::cli {
namespace {

using test_support::Capture;
using test_support::Outcome;

// PyTorch's add kernel, as CUPTI names it.
constexpr char kMangled[] =
    "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIN3c104HalfEEESt5arrayIPcLm3EEEEviT0_T1_";
constexpr char kBase[] = "vectorized_elementwise_kernel<8, CUDAFunctor_add, array>";
constexpr char kDemangled[] =
    "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul> >"
    "(int, at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>)";

// A launch-bound loop of the one kernel: it heads the findings and the tables.
std::string LaunchBoundTrace(int launches) {
  cuscope::testing::SyntheticTrace s;
  s.AddDevice(cuscope::testing::H200Device());
  for (int i = 0; i < launches; ++i) {
    const double t0 = i * 30.0;
    s.Launch(kMangled, t0, 20, t0 + 21, 4);
  }
  return s.Write();
}

TEST(KernelNamesCliTest, AnalyzeShowsBaseNamesUnlessAsked) {
  const std::string trace = LaunchBoundTrace(300);
  const Outcome base = Capture(RunAnalyze, {trace});
  ASSERT_EQ(base.code, 0) << base.err;
  EXPECT_TRUE(absl::StrContains(base.out, kBase)) << base.out;
  EXPECT_FALSE(absl::StrContains(base.out, kMangled)) << base.out;
  EXPECT_FALSE(absl::StrContains(base.out, "at::native::")) << base.out;

  const Outcome mangled = Capture(RunAnalyze, {"--kernel-names", "mangled", trace});
  ASSERT_EQ(mangled.code, 0) << mangled.err;
  EXPECT_TRUE(absl::StrContains(mangled.out, kMangled)) << mangled.out;
  EXPECT_FALSE(absl::StrContains(mangled.out, kBase)) << mangled.out;

  const Outcome demangled = Capture(RunAnalyze, {"--kernel-names", "demangled", trace});
  ASSERT_EQ(demangled.code, 0) << demangled.err;
  EXPECT_TRUE(absl::StrContains(demangled.out, kDemangled)) << demangled.out;

  // JSON is for programs: the name as recorded.
  const Outcome json = Capture(RunAnalyze, {"--format", "json", trace});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_TRUE(absl::StrContains(json.out, kMangled)) << json.out;
}

TEST(KernelNamesCliTest, StatsHonoursTheStyleInEveryFormat) {
  const std::string trace = LaunchBoundTrace(10);
  const Outcome text = Capture(RunStats, {"--report", "cuda_gpu_kern_sum", trace});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(absl::StrContains(text.out, std::string("  ") + kBase + "\n")) << text.out;
  // The Name column's rule is as wide as the names shown, not as the recorded ones.
  EXPECT_FALSE(absl::StrContains(text.out, std::string(sizeof(kBase) + 2, '-'))) << text.out;
  const Outcome csv = Capture(RunStats, {"--report", "cuda_gpu_kern_sum", "--format", "csv", trace});
  EXPECT_TRUE(absl::StrContains(csv.out, std::string(",\"") + kBase + "\"\n")) << csv.out;  // quoted: it has commas
  EXPECT_FALSE(absl::StrContains(csv.out, kMangled)) << csv.out;
  const Outcome json = Capture(RunStats, {"--report", "cuda_gpu_kern_sum", "--format", "json", trace});
  EXPECT_TRUE(absl::StrContains(json.out, std::string("\"") + kBase + "\"")) << json.out;
  const Outcome mangled_csv =
      Capture(RunStats, {"--report", "cuda_gpu_kern_sum", "--format=csv", "--kernel-names=mangled", trace});
  EXPECT_TRUE(absl::StrContains(mangled_csv.out, kMangled)) << mangled_csv.out;
  const Outcome mangled = Capture(RunStats, {"--report", "cuda_gpu_kern_sum", "--kernel-names", "mangled", trace});
  EXPECT_TRUE(absl::StrContains(mangled.out, kMangled)) << mangled.out;
}

TEST(KernelNamesCliTest, DiffListsKernelsByBaseName) {
  const std::string base = LaunchBoundTrace(300), next = LaunchBoundTrace(200);
  const Outcome r = Capture(RunDiff, {base, next});
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, kBase)) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, kMangled)) << r.out;
}

TEST(KernelNamesCliTest, AnUnknownStyleIsAUsageError) {
  const Outcome r = Capture(RunAnalyze, {"--kernel-names", "short", LaunchBoundTrace(3)});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--kernel-names takes base, demangled or mangled, not 'short'")) << r.err;
}

}  // namespace
}  // namespace cuscope::cli
