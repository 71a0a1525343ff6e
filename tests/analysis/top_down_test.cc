// The one-run top-down: the collector's choice shown in its order with each kernel's share of the
// window, verdicts matched by name + grid + block from metric rows without kernel rows, a hot
// kernel that never launched again, and the metrics phase kept off the timeline.
#include "lib/analysis/top_down_report.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/rules/rules.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/core/metric_sets.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

namespace metric = core::metric;
using cuscope::testing::Config;
using cuscope::testing::MetricValues;
using cuscope::testing::SyntheticTrace;

std::pair<std::string, double> M(std::string_view name, double value) { return {std::string(name), value}; }

const MetricValues kComputeBound = {M(metric::kDuration, 1e6),          M(metric::kSmThroughputPct, 80),
                                    M(metric::kMemoryThroughputPct, 50), M(metric::kDramThroughputPct, 20),
                                    M(metric::kL2ThroughputPct, 30),     M(metric::kAchievedOccupancyPct, 24)};
const MetricValues kMemoryBound = {M(metric::kDuration, 2e5), M(metric::kSmThroughputPct, 15),
                                   M(metric::kMemoryThroughputPct, 88), M(metric::kDramThroughputPct, 86),
                                   M(metric::kL2ThroughputPct, 60)};
const MetricValues kLatencyBound = {M(metric::kDuration, 1e5), M(metric::kSmThroughputPct, 10),
                                    M(metric::kMemoryThroughputPct, 12), M(metric::kDramThroughputPct, 10),
                                    M(metric::kL2ThroughputPct, 12)};

core::HotKernelChoice Total(const core::KernelConfig& c, uint64_t total_ns, uint64_t launches) {
  core::HotKernelChoice h;
  h.name = std::string(c.name);
  h.device = c.device;
  h.shape.grid = {static_cast<uint32_t>(c.grid_x), 1, 1};
  h.shape.block = {static_cast<uint32_t>(c.block_x), 1, 1};
  h.total_ns = total_ns;
  h.launches = launches;
  return h;
}

// A 10 ms timeline window: gemm (4 x 1 ms), relu on a grid of 512 (8 x 125 us) and of 1024 (4 x
// 250 us) — the same time, 1 ms each —, and add (2 x 100 us). When the window closes the collector
// takes the 4 hottest; afterwards it profiles gemm twice, relu/512 once (its last launch), relu/1024
// twice; add never launches again.
struct TopDownRun {
  core::KernelConfig gemm = Config("gemm", 264, 256, 128);
  core::KernelConfig relu512 = Config("relu", 512, 256);
  core::KernelConfig relu1024 = Config("relu", 1024, 256);
  core::KernelConfig add = Config("add", 128, 256);
  std::vector<core::HotKernelChoice> chosen;

  std::string Write(SyntheticTrace& s) {
    s.AddDevice(cuscope::testing::H200Device());
    s.header().mutable_config()->set_top_down_kernels(4);
    s.header().mutable_config()->set_top_down_launches(2);
    s.TimelineWindowOpens(0);
    for (int i = 0; i < 4; ++i) {
      s.KernelWith(gemm, i * 2000.0, 1000);
      s.KernelWith(relu1024, i * 2000.0 + 1000, 250);
    }
    for (int i = 0; i < 8; ++i) s.KernelWith(relu512, i * 1000.0 + 1300, 125, 0, 0, /*stream=*/8);
    for (int i = 0; i < 2; ++i) s.KernelWith(add, i * 1000.0 + 8500, 100);
    s.TimelineWindowCloses(10'000, "duration");
    // The collector's choice, as it makes it.
    chosen = core::SelectHotKernels({Total(add, 200'000, 2), Total(relu1024, 1'000'000, 4), Total(gemm, 4'000'000, 4),
                                     Total(relu512, 1'000'000, 8)},
                                    4);
    s.builder().AddTopDownSelection(cuscope::testing::Us(10'100), 6'200'000, chosen);
    // The metrics phase: every launch profiled after the window, with no kernel row.
    s.MetricsAfterWindow(gemm, 20'000, 200'000, kComputeBound);
    s.MetricsAfterWindow(relu1024, 230'000, 200'000, kLatencyBound);
    s.MetricsAfterWindow(gemm, 440'000, 200'000, kComputeBound);
    s.MetricsAfterWindow(relu1024, 650'000, 200'000, kLatencyBound);
    s.MetricsAfterWindow(relu512, 860'000, 200'000, kMemoryBound);
    return s.Write();
  }
};

// The run as `cuscope analyze` reads it: trace, timeline, verdicts, the top-down report. Not
// copyable: the timeline points into the trace.
struct JudgedRun {
  JudgedRun() {
    run.Write(s);
    trace = s.Load();
    timeline.emplace(Timeline::Build(trace));
    verdicts = JudgeKernels(*timeline, Thresholds());
    report = BuildTopDown(*timeline, verdicts);
  }
  JudgedRun(const JudgedRun&) = delete;
  JudgedRun& operator=(const JudgedRun&) = delete;

  TopDownRun run;
  SyntheticTrace s;
  core::Trace trace;
  std::optional<Timeline> timeline;
  std::vector<KernelVerdict> verdicts;
  TopDownReport report;
};

TEST(TopDownTest, TiesInTheChoiceKeepTheCollectorsOrder) {
  TopDownRun run;
  SyntheticTrace s;
  run.Write(s);
  // relu/512 and relu/1024 both took 1 ms: the one with more launches comes first.
  ASSERT_EQ(run.chosen.size(), 4u);
  EXPECT_EQ(run.chosen[1].shape.grid[0], 512u);
  EXPECT_EQ(run.chosen[2].shape.grid[0], 1024u);

  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const std::vector<KernelVerdict> verdicts = JudgeKernels(timeline, Thresholds());
  const TopDownReport r = BuildTopDown(timeline, verdicts);
  ASSERT_TRUE(r.present);
  ASSERT_EQ(r.choices.size(), 1u);
  const std::vector<HotKernelEntry>& k = r.choices[0].kernels;
  ASSERT_EQ(k.size(), 4u);
  EXPECT_EQ(k[0].Label(), "gemm [grid 264 1 1, block 256 1 1]");
  EXPECT_EQ(k[1].Label(), "relu [grid 512 1 1, block 256 1 1]");
  EXPECT_EQ(k[2].Label(), "relu [grid 1024 1 1, block 256 1 1]");
  EXPECT_EQ(k[3].Label(), "add [grid 128 1 1, block 256 1 1]");
  EXPECT_NEAR(k[0].window_share, 4.0 / 6.2, 1e-12);
  EXPECT_EQ(k[1].launches, 8u);
  EXPECT_FALSE(k[1].tied_with_previous);
  EXPECT_TRUE(k[2].tied_with_previous);

  const std::string text = RenderTopDownText(r, verdicts);
  const size_t first = text.find("  1. gemm [grid 264 1 1, block 256 1 1]: 64.5% of the window's kernel time "
                                 "(4.000 ms, 4 launches): compute-bound (2 launches profiled)\n");
  const size_t second = text.find("  2. relu [grid 512 1 1, block 256 1 1]: 16.1% of the window's kernel time "
                                  "(1.000 ms, 8 launches): memory-bound (1 launch profiled of 2 asked: it launched "
                                  "only 1 time after the window)\n");
  const size_t third = text.find("  3. relu [grid 1024 1 1, block 256 1 1]: 16.1% of the window's kernel time "
                                 "(1.000 ms, 4 launches) [same time as 2.: fewer launches or later in order]: "
                                 "latency-bound (2 launches profiled)\n");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  ASSERT_NE(third, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
}

TEST(TopDownTest, KernelsDifferingOnlyInGridGetTheirOwnMetricRows) {
  const JudgedRun judged;
  const std::vector<KernelVerdict>& verdicts = judged.verdicts;
  const TopDownReport& r = judged.report;
  const std::vector<HotKernelEntry>& k = r.choices[0].kernels;
  ASSERT_TRUE(k[1].verdict && k[2].verdict);
  const KernelVerdict& small = verdicts[*k[1].verdict];
  const KernelVerdict& big = verdicts[*k[2].verdict];
  EXPECT_EQ(small.grid[0], 512);
  EXPECT_EQ(small.profiled_launches, 1u);
  EXPECT_EQ(small.bottleneck, Bottleneck::kMemory);
  EXPECT_DOUBLE_EQ(*small.dram_pct, 86);
  EXPECT_EQ(big.grid[0], 1024);
  EXPECT_EQ(big.profiled_launches, 2u);
  EXPECT_EQ(big.bottleneck, Bottleneck::kLatency);
  EXPECT_DOUBLE_EQ(*big.dram_pct, 10);
  // The launch configuration comes from the window's kernel rows of the same name and shape: the
  // theoretical occupancy of gemm's 128 registers per thread is known.
  const KernelVerdict& gemm = verdicts[*k[0].verdict];
  EXPECT_TRUE(gemm.launch_known);
  ASSERT_TRUE(gemm.theoretical.has_value());
  EXPECT_DOUBLE_EQ(gemm.theoretical->occupancy_pct, 25);
  // Its time is the window's 4 ms: the launches replayed after the window are not the window's.
  EXPECT_EQ(gemm.gpu_time_ns, 4'000'000u);
  EXPECT_EQ(gemm.timeline_launches, 4u);
  EXPECT_TRUE(r.other_verdicts.empty());
}

TEST(TopDownTest, AHotKernelThatNeverLaunchedAgainIsSaidPlainly) {
  const JudgedRun judged;
  const std::vector<KernelVerdict>& verdicts = judged.verdicts;
  const TopDownReport& r = judged.report;
  EXPECT_FALSE(r.choices[0].kernels[3].verdict.has_value());
  const std::string text = RenderTopDownText(r, verdicts);
  EXPECT_NE(text.find("  4. add [grid 128 1 1, block 256 1 1]: 3.2% of the window's kernel time (200.0 us, 2 "
                      "launches): no metrics\n     it did not launch again after the timeline window, so no counters "
                      "were collected for it. To get its verdict, run longer so that it launches again after the "
                      "window closes, or end the window before its last launches"),
            std::string::npos)
      << text;
  // Others did get metrics, so this is not a collection failure.
  EXPECT_EQ(text.find("No hot kernel got metrics"), std::string::npos);
  const Table table = TopDownTable(r, verdicts);
  ASSERT_EQ(table.rows.size(), 4u);
  EXPECT_EQ(table.rows[3][6], "not profiled");
  EXPECT_EQ(table.rows[2][7], "same time as the kernel before it");
}

TEST(TopDownTest, TheMetricsPhaseIsNeitherIdleNorBusy) {
  TopDownRun run;
  SyntheticTrace s;
  run.Write(s);
  const core::Trace trace = s.Load();
  const Analysis a = Analyze(trace, AnalyzeOptions{});
  // The window is 10 ms; the replays (1 s after it) are not in it, not in the GPU's active span and
  // not counted busy.
  EXPECT_EQ(a.baseline.wall_ns, 10'000'000u);
  EXPECT_EQ(a.baseline.metrics_ns, 0u);
  ASSERT_EQ(a.summary.devices_size(), 1u);
  EXPECT_EQ(a.summary.devices(0).metrics_collection_ns(), 0u);
  for (const Finding& f : a.findings) {
    if (f.rule_id != "gpu.idle") continue;
    EXPECT_EQ(*f.number("replayed_kernel_ns"), 0) << f.headline;
    EXPECT_LT(*f.number("active_ns"), 10e6) << f.headline;
  }
  for (const std::string& w : a.warnings) EXPECT_EQ(w.find("metric collection took"), std::string::npos) << w;
  EXPECT_EQ(a.top_down.metrics_phase_windows, 5u);
  EXPECT_EQ(a.top_down.metrics_phase_ns, 1'000'000'000u);
  const std::string text = RenderAnalysisText(a, "run.cuscope", 10);
  EXPECT_NE(text.find("Metric collection ran after the window: 5 replay windows, 1.000 s in all, while the timeline "
                      "was off: none of it counts as idle or busy time above."),
            std::string::npos)
      << text;
  // The top-down section replaces the kernel-internals one.
  EXPECT_EQ(text.find("Kernel internals:"), std::string::npos) << text;
  EXPECT_EQ(text.find("Other profiled kernels"), std::string::npos) << text;
}

TEST(TopDownTest, AWindowReopenedAfterTheMetricsPhaseDoesNotMakeItIdle) {
  // cudaProfilerStart/Stop twice: the top-down chose after the first range, profiled between the two.
  SyntheticTrace s;
  const core::KernelConfig k = Config("step", 132, 256);
  s.TimelineWindowOpens(0, "cudaProfilerStart");
  for (int i = 0; i < 10; ++i) s.KernelWith(k, i * 100.0, 95);
  s.TimelineWindowCloses(1000, "cudaProfilerStop");
  s.TopDown(1100, 950, {{k, 950, 10}});
  s.MetricsAfterWindow(k, 2000, 300'000, kLatencyBound);
  s.TimelineWindowOpens(400'000, "cudaProfilerStart");
  for (int i = 0; i < 10; ++i) s.KernelWith(k, 400'000 + i * 100.0, 95);
  s.TimelineWindowCloses(401'000, "cudaProfilerStop");
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  EXPECT_TRUE(GpuIdleRule(timeline, Thresholds()).empty());
  EXPECT_EQ(timeline.devices()[0].counted_active_ns(), 1'995'000u);
}

TEST(TopDownTest, OldTracesWithoutChoiceOrShapesAreUnchanged) {
  // A metric row as older collectors wrote it: no launch shape, and here no kernel row either.
  SyntheticTrace s;
  s.Kernel("k", 0, 100);
  s.Metrics(/*correlation=*/4242, "k", 0, 200, 1000, kLatencyBound);
  const core::Trace trace = s.Load();
  const Analysis a = Analyze(trace, AnalyzeOptions{});
  EXPECT_FALSE(a.top_down.present);
  ASSERT_EQ(a.kernel_verdicts.size(), 1u);
  EXPECT_FALSE(a.kernel_verdicts[0].shape_known);
  EXPECT_EQ(a.kernel_verdicts[0].Label(), "k");
  EXPECT_EQ(a.kernel_verdicts[0].timeline_launches, 1u);  // grouped with k's launches by name alone
  const std::string text = RenderAnalysisText(a, "old.cuscope", 10);
  EXPECT_EQ(text.find("Top-down"), std::string::npos) << text;
  EXPECT_NE(text.find("Kernel internals: 1 profiled kernel, 1 launch profiled"), std::string::npos) << text;
  EXPECT_NE(text.find("  1. k: latency-bound"), std::string::npos) << text;
}

TEST(TopDownTest, NoChoiceRecordedSaysWhatItWouldHaveBeen) {
  SyntheticTrace s;
  s.header().mutable_config()->set_top_down_kernels(2);
  for (int i = 0; i < 5; ++i) s.Kernel("hot", i * 100.0, 60, 7, 0, 0, 0, 0, /*grid_x=*/64);
  for (int i = 0; i < 5; ++i) s.Kernel("warm", i * 100.0 + 60, 30, 7, 0, 0, 0, 0, /*grid_x=*/32);
  s.Kernel("cold", 600, 5);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const TopDownReport r = BuildTopDown(timeline, {});
  ASSERT_TRUE(r.present);
  EXPECT_TRUE(r.choices.empty());
  ASSERT_EQ(r.would_choose.size(), 2u);
  EXPECT_EQ(r.would_choose[0].name, "hot");
  EXPECT_EQ(r.would_choose[1].name, "warm");
  const std::string text = RenderTopDownText(r, {});
  EXPECT_NE(text.find("no choice was recorded: the program ended before the window closed"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  1. hot [grid 64 1 1, block 128 1 1] (300.0 us, 5 launches)\n"), std::string::npos) << text;
}

TEST(TopDownTest, AnEmptyWindowChoosesNothingAndSaysSo) {
  SyntheticTrace s;
  s.TimelineWindow(0, 1000);
  s.TopDown(1100, 0, {});
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const TopDownReport r = BuildTopDown(timeline, {});
  ASSERT_EQ(r.choices.size(), 1u);
  EXPECT_NE(RenderTopDownText(r, {}).find("No kernel ran in the timeline window: nothing was chosen or profiled."),
            std::string::npos);
}

}  // namespace
}  // namespace cuscope::analysis
