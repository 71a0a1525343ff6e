// One number for one thing: a figure that two parts of `analyze` show (or `analyze` and another
// command) is the same number, on the shipped top-down trace whose kernels run past its timeline
// window (1928 kernels inside it, 2695 in the whole trace).
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/analysis/analysis.h"
#include "lib/analysis/analysis_text.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"

namespace cuscope::analysis {
namespace {

constexpr char kNvjet[] = "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_TNT";

class OneNumberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<core::Trace> trace = core::LoadTrace(absl::StrCat(CUSCOPE_TRACES_DIR, "/h200_torch_top_down.cuscope"));
    ASSERT_TRUE(trace.ok()) << trace.status();
    trace_ = std::move(*trace);
    analysis_ = Analyze(trace_, AnalyzeOptions());
  }
  const Finding* FindingOf(const std::string& rule) const {
    for (const Finding& f : analysis_.findings) {
      if (f.rule_id == rule) return &f;
    }
    return nullptr;
  }
  core::Trace trace_;
  Analysis analysis_;
};

TEST_F(OneNumberTest, TheTopDownCountsTheWindowTheBaselineCounts) {
  ASSERT_EQ(analysis_.top_down.choices.size(), 1u);
  const TopDownChoice& choice = analysis_.top_down.choices[0];
  EXPECT_EQ(choice.window_kernel_ns, analysis_.baseline.kernel_ns);
  ASSERT_FALSE(choice.kernels.empty());
  const HotKernelEntry& top = choice.kernels[0];
  EXPECT_EQ(top.name, kNvjet);
  // The launches counted on the trace's own rows inside the capture window, as the baseline does.
  const Timeline timeline = Timeline::Build(trace_);
  uint64_t launches = 0;
  for (const core::KernelRow& k : trace_.kernels) {
    if (timeline.OnTimeline(k) && timeline.Captured(k.start) && trace_.dict.kernel_name(k.signature) == top.name &&
        static_cast<uint32_t>(trace_.dict.signature(k.signature).grid_y()) == top.grid[1]) {
      ++launches;
    }
  }
  EXPECT_EQ(top.launches, launches);
  EXPECT_EQ(top.launches, 766u);  // not the collector's 1,073, which ran on past the window
}

TEST_F(OneNumberTest, AKernelsLaunchCountIsTheLaunchesItsTimeIsOf) {
  const Finding* hot = FindingOf("hot.kernels");
  ASSERT_NE(hot, nullptr);
  uint64_t hot_count = 0, hot_time = 0;
  for (const Offender& o : hot->offenders) {
    if (o.name.find("nvjet") != std::string::npos) {
      hot_count = o.count;
      hot_time = o.time_ns;
    }
  }
  ASSERT_GT(hot_count, 0u);
  bool seen = false;
  for (const Finding& f : analysis_.findings) {
    if (f.rule_id != "kernel.internals") continue;
    for (const Offender& o : f.offenders) {
      if (o.name.find("nvjet") == std::string::npos) continue;
      seen = true;
      // Its profiled launches replayed after the window add no time: no count either.
      EXPECT_EQ(o.time_ns, hot_time);
      EXPECT_EQ(o.count, hot_count);  // 1,073, not 1,076
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(OneNumberTest, TheHeaderSaysWhichFiguresCountTheWindow) {
  const std::string text = RenderAnalysisText(analysis_, "run.cuscope", 10, core::KernelNameStyle::kBase);
  EXPECT_NE(text.find(absl::StrCat(analysis_.summary.kernels(), " kernels")), std::string::npos);
  EXPECT_NE(text.find(absl::StrCat("in the whole trace; ", analysis_.baseline.kernels, " of the kernels")),
            std::string::npos)
      << text.substr(0, 400);
}

// The busy share of the GPU lines and of gpu.idle is one number, on every shipped trace (metric
// replays count busy in both).
TEST(OneNumberAcrossTracesTest, GpuLineAndGpuIdleGiveOneBusyShare) {
  int judged = 0;
  for (const char* name : {"h200_known_work.cuscope", "h200_kernel_internals_metrics.cuscope",
                           "h200_torch_top_down.cuscope", "h200_examples/sync_every_step.cuscope",
                           "h200_examples/launch_overhead.cuscope", "h200_examples/pageable_copies.cuscope"}) {
    absl::StatusOr<core::Trace> trace = core::LoadTrace(absl::StrCat(CUSCOPE_TRACES_DIR, "/", name));
    ASSERT_TRUE(trace.ok()) << name;
    const Analysis a = Analyze(*trace, AnalyzeOptions());
    for (const Finding& f : a.findings) {
      if (f.rule_id != "gpu.idle") continue;
      ASSERT_EQ(a.summary.devices_size(), 1);
      EXPECT_NEAR(*f.number("busy_share"), a.summary.devices(0).busy_share(), 1e-9) << name;
      ++judged;
    }
  }
  EXPECT_GE(judged, 3);
}

// A trace whose every launch was replayed to collect metrics has no timeline of kernels: no idle
// GPU is claimed (it said "idle 97.2%" as an error). A trace with timeline kernels beside its
// replays is still judged.
TEST(OneNumberAcrossTracesTest, AMetricsOnlyTraceIsNotAnIdleGpu) {
  for (const auto& [name, judged] : {std::pair<const char*, bool>{"h200_torch_gemm_metrics.cuscope", false},
                                     std::pair<const char*, bool>{"h200_kernel_internals_metrics.cuscope", true}}) {
    absl::StatusOr<core::Trace> trace = core::LoadTrace(absl::StrCat(CUSCOPE_TRACES_DIR, "/", name));
    ASSERT_TRUE(trace.ok()) << name;
    const Analysis a = Analyze(*trace, AnalyzeOptions());
    bool idle = false;
    for (const Finding& f : a.findings) idle = idle || f.rule_id == "gpu.idle";
    EXPECT_EQ(idle, judged) << name;
    EXPECT_GT(a.summary.replayed_kernels(), 0u) << name;
  }
}

}  // namespace
}  // namespace cuscope::analysis
