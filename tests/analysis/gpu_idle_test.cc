// The gpu.idle rule: a positive case, a negative control, and both sides of each threshold, on
// synthetic timelines.
#include "lib/analysis/rules/rules.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/analysis/rule_test_support.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::RunRule;
using cuscope::testing::With;

// 20 kernels of `kernel_us` every 100 us, each launched 2 us before it starts.
void PeriodicKernels(SyntheticTrace& s, double kernel_us, int count = 20) {
  for (int i = 0; i < count; ++i) s.Launch("step_kernel", i * 100.0 - 3, 2, i * 100.0, kernel_us);
}

TEST(GpuIdleRule, HostBoundGapsAreAttributedToTheHost) {
  SyntheticTrace s;
  PeriodicKernels(s, 10);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_NEAR(*f[0].number("busy_share"), 200.0 / 1910.0, 1e-3);
  EXPECT_GT(*f[0].number("idle_host_bound_ns"), *f[0].number("idle_in_launch_ns"));
  EXPECT_NEAR(*f[0].number("idle_in_launch_ns"), 19 * 2000.0, 1.0);
  EXPECT_EQ(*f[0].number("micro_gaps"), 19);  // 90 us gaps count: they are below 100 us
  EXPECT_NE(f[0].headline.find("host-bound"), std::string::npos) << f[0].headline;
  EXPECT_EQ(f[0].recoverable_ns, 1710'000u);
}

TEST(GpuIdleRule, GapsSpentInSyncCallsAreAttributedToSync) {
  SyntheticTrace s;
  for (int i = 0; i < 20; ++i) {
    s.Launch("k", i * 100.0 - 3, 2, i * 100.0, 10);
    s.Api("cudaStreamSynchronize_v3020", i * 100.0 + 1, 95);  // covers 86 of the 90 us gap
  }
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_GT(*f[0].number("idle_in_sync_ns"), 0.8 * *f[0].number("idle_ns"));
  EXPECT_NE(f[0].headline.find("synchronization"), std::string::npos) << f[0].headline;
}

TEST(GpuIdleRule, CallsOnSeveralThreadsInAnyRecordOrderAreAttributedBySweep) {
  // The syncs (thread 2) reach the trace after all the launches (thread 1): the calls are not in
  // start order, and a sync covering a gap wins over a launch in it.
  SyntheticTrace s;
  for (int i = 0; i < 20; ++i) s.Launch("k", i * 100.0 - 3, 2, i * 100.0, 10);
  for (int i = 0; i < 20; ++i) s.Api("cudaStreamSynchronize_v3020", i * 100.0 + 1, 95, /*tid=*/2);
  for (int i = 1; i < 20; ++i) s.Api("cudaLaunchKernel_v7000", i * 100.0 - 40, 5, /*tid=*/1);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  // Per 90 us gap: 86 us in the sync (the extra launch inside it loses its 5 us to the sync), 2 us
  // in the kernel's own launch after the sync returned, 2 us host-bound.
  EXPECT_NEAR(*f[0].number("idle_in_sync_ns"), 19 * 86'000.0, 1);
  EXPECT_NEAR(*f[0].number("idle_in_launch_ns"), 19 * 2'000.0, 1);
  EXPECT_NEAR(*f[0].number("idle_host_bound_ns"), 19 * 2'000.0, 1);
}

TEST(GpuIdleRule, BusyDeviceRaisesNothing) {
  SyntheticTrace s;
  for (int i = 0; i < 20; ++i) s.Launch("k", i * 100.0 - 50, 2, i * 100.0, 99);
  EXPECT_TRUE(RunRule(s, GpuIdleRule, "gpu.idle").empty());
}

TEST(GpuIdleRule, BusyShareThresholdBothSides) {
  SyntheticTrace at_default;
  PeriodicKernels(at_default, 75);  // busy 1500 of 1975 us = 76%
  EXPECT_EQ(RunRule(at_default, GpuIdleRule, "gpu.idle").size(), 1u);
  SyntheticTrace lowered;
  PeriodicKernels(lowered, 75);
  EXPECT_TRUE(RunRule(lowered, GpuIdleRule, "gpu.idle", With({"gpu_busy_min_share=0.7"})).empty());
}

// One init kernel, then `gap_us` with nothing on the GPU, then one long kernel: the shape of a
// fused program whose whole run is a few tens of microseconds.
void InitThenOneKernel(SyntheticTrace& s, double gap_us) {
  s.Launch("init", -5, 2, 0, 1);
  s.Launch("fused", gap_us - 5, 2, 1 + gap_us, 29);
}

TEST(GpuIdleRule, IdleOfAFewMicrosecondsIsInfoWhateverItsShare) {
  SyntheticTrace s;
  InitThenOneKernel(s, 55);  // 55 of 85 us idle: 65%, but 55 us
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  SyntheticTrace lowered;
  InitThenOneKernel(lowered, 55);
  const auto strict = RunRule(lowered, GpuIdleRule, "gpu.idle", With({"min_recoverable_ms=0.05"}));
  ASSERT_EQ(strict.size(), 1u);
  EXPECT_EQ(strict[0].severity, Severity::kError);
}

TEST(GpuIdleRule, MinimumRecoverableTimeBothSides) {
  SyntheticTrace at;
  InitThenOneKernel(at, 1000);  // exactly 1 ms idle
  const auto f_at = RunRule(at, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f_at.size(), 1u);
  EXPECT_EQ(f_at[0].recoverable_ns, 1'000'000u);
  EXPECT_EQ(f_at[0].severity, Severity::kError);
  SyntheticTrace below;
  InitThenOneKernel(below, 999);
  const auto f_below = RunRule(below, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f_below.size(), 1u);
  EXPECT_EQ(f_below[0].severity, Severity::kInfo);
}

// `kernels` back-to-back graph-launched kernels of 1 us from `start_us`.
void GraphBurst(SyntheticTrace& s, double start_us, int kernels) {
  const uint64_t corr = s.Api("cudaGraphLaunch_v10000", start_us - 10, 5);
  for (int i = 0; i < kernels; ++i) s.Kernel("graph_node", start_us + i * 1.0, 1.0, 7, corr, /*graph_id=*/5);
}

// The host builds and instantiates a graph for `setup_us`, with host work between the calls.
void BuildGraph(SyntheticTrace& s, double start_us, double setup_us) {
  s.Api("cudaGraphCreate_v10000", start_us, 1);
  for (int i = 0; i < 100; ++i) s.Api("cudaGraphAddKernelNode_v10000", start_us + 10 + i * 10.0, 5);
  s.Api("cudaGraphInstantiate_v10000", start_us + 1100, setup_us - 1200);
}

TEST(GpuIdleRule, GraphConstructionAfterAnInitKernelIsSetupNotAnError) {
  SyntheticTrace s;
  s.Launch("init", -5, 2, 0, 1);
  BuildGraph(s, 10, 290'000);
  GraphBurst(s, 290'100, 20'000);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo) << f[0].headline;
  EXPECT_GT(*f[0].number("idle_in_setup_ns"), 290e6 - 1e3);
  EXPECT_LT(f[0].recoverable_ns, 1'000'000u);
  EXPECT_NE(f[0].headline.find("one-off setup or start-up"), std::string::npos) << f[0].headline;
}

TEST(GpuIdleRule, SetupCallsMidRunAreSetupUnlessTheyRecur) {
  // Busy phases of 2,000 back-to-back kernels, separated by graph builds of 20 ms.
  auto run = [](int builds) {
    SyntheticTrace s;
    double t = 0;
    for (int b = 0; b <= builds; ++b) {
      GraphBurst(s, t, 2000);
      t += 2000;
      if (b < builds) {
        BuildGraph(s, t + 10, 20'000);
        t += 20'100;
      }
    }
    return RunRule(s, GpuIdleRule, "gpu.idle");
  };
  const auto once = run(1);
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(*once[0].number("setup_gaps"), 1);
  EXPECT_EQ(once[0].severity, Severity::kInfo) << once[0].headline;
  // Three builds: setup repeats in the loop and counts, as `idle_setup_recurring_gaps` says.
  const auto recurring = run(3);
  ASSERT_EQ(recurring.size(), 1u);
  EXPECT_EQ(*recurring[0].number("setup_gaps"), 3);
  EXPECT_EQ(recurring[0].severity, Severity::kError);
  EXPECT_NE(recurring[0].recommendation.find("cudaGraphExecUpdate"), std::string::npos) << recurring[0].recommendation;
}

TEST(GpuIdleRule, LaunchesDuringStreamCaptureAreSetup) {
  SyntheticTrace s;
  GraphBurst(s, 0, 2000);
  s.Api("cudaStreamBeginCapture_v10000", 2010, 1);
  for (int i = 0; i < 100; ++i) s.Api("cudaLaunchKernel_v7000", 2020 + i * 50.0, 45);  // captured: no kernels
  s.Api("cudaStreamEndCapture_v10000", 7100, 1);
  GraphBurst(s, 7200, 2000);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("idle_in_launch_ns"), 0);
  EXPECT_EQ(*f[0].number("setup_gaps"), 1);
}

// One graph launch of `kernels` kernels of 1 us with `gap_us` between them, after a short setup.
void GappedGraphLaunch(SyntheticTrace& s, int kernels, double gap_us, bool from_graph) {
  const uint64_t corr = s.Api(from_graph ? "cudaGraphLaunch_v10000" : "cudaLaunchKernel_v7000", -10, 5);
  s.Api("cudaStreamSynchronize_v3020", -4, kernels * (1.0 + gap_us) + 10);
  for (int i = 0; i < kernels; ++i) {
    s.Kernel("graph_node", i * (1.0 + gap_us), 1.0, 7, from_graph ? corr : 0, from_graph ? 5 : 0);
  }
}

TEST(GpuIdleRule, GapsBetweenNodesOfOneGraphLaunchAreTheGpusOwnLatency) {
  // 20,000 kernels of 1 us with 0.375 us between them: 27% idle, all of it inside the graph.
  SyntheticTrace s;
  GappedGraphLaunch(s, 20'000, 0.375, /*from_graph=*/true);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo) << f[0].headline;
  EXPECT_EQ(*f[0].number("graph_node_gaps"), 19'999);
  EXPECT_EQ(*f[0].number("graph_node_idle_ns"), 19'999 * 375.0);
  EXPECT_EQ(f[0].recoverable_ns, 0u);
  EXPECT_NE(f[0].headline.find("between the nodes of CUDA graphs"), std::string::npos) << f[0].headline;
  EXPECT_NE(f[0].recommendation.find("fuse neighbouring kernels"), std::string::npos) << f[0].recommendation;
}

TEST(GpuIdleRule, TheSameGapsBetweenSeparateLaunchesCount) {
  // Negative control: the same timeline from separate launches is the host's doing.
  SyntheticTrace s;
  GappedGraphLaunch(s, 20'000, 0.375, /*from_graph=*/false);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kError) << f[0].headline;
  EXPECT_EQ(*f[0].number("graph_node_gaps"), 0);
  EXPECT_GT(f[0].recoverable_ns, 4'000'000u);
}

TEST(GpuIdleRule, GraphNodeGapThresholdBothSides) {
  // 1,000 kernels of 1 us, gaps of 1.875 us (under the 2 us default: the GPU's) or 2 us (counted).
  SyntheticTrace under;
  GappedGraphLaunch(under, 1000, 1.875, true);
  const auto f_under = RunRule(under, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f_under.size(), 1u);
  EXPECT_EQ(*f_under[0].number("graph_node_gaps"), 999);
  EXPECT_EQ(f_under[0].severity, Severity::kInfo);
  SyntheticTrace at;
  GappedGraphLaunch(at, 1000, 2.0, true);
  const auto f_at = RunRule(at, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f_at.size(), 1u);
  EXPECT_EQ(*f_at[0].number("graph_node_gaps"), 0);
  EXPECT_EQ(f_at[0].severity, Severity::kError) << f_at[0].headline;
  // The threshold is the user's to move.
  SyntheticTrace moved;
  GappedGraphLaunch(moved, 1000, 2.0, true);
  const auto f_moved = RunRule(moved, GpuIdleRule, "gpu.idle", With({"graph_node_gap_max_us=2.5"}));
  ASSERT_EQ(f_moved.size(), 1u);
  EXPECT_EQ(*f_moved[0].number("graph_node_gaps"), 999);
}

// One launch of a 1,000-node graph at `at_us`: the host stays in cudaGraphLaunch while it submits
// the nodes, and the GPU runs dry for `stall_us` in the middle (what a busy H200 host showed).
void SlowGraphLaunch(SyntheticTrace& s, double at_us, double stall_us) {
  const uint64_t corr = s.Api("cudaGraphLaunch_v10000", at_us - 5, 2 * 1000 + stall_us);
  for (int i = 0; i < 1000; ++i) {
    s.Kernel("graph_node", at_us + i * 1.25 + (i >= 500 ? stall_us : 0), 1.0, 7, corr, 5);
  }
}

TEST(GpuIdleRule, AGraphsFirstLaunchStallingTheGpuIsOneOffSetup) {
  SyntheticTrace s;
  s.Launch("init", -20, 2, -15, 1);
  SlowGraphLaunch(s, 0, 5000);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle", With({"idle_startup_ops_share=0"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo) << f[0].headline;
  // The 5 ms stall, the 0.25 us gap beside it, and the 14 us from the init kernel to the first node.
  EXPECT_NEAR(*f[0].number("setup_idle_ns"), 5'000'000 + 250 + 14'000, 1);
  EXPECT_LT(f[0].recoverable_ns, 100'000u);
}

TEST(GpuIdleRule, TheSameStallInALaterLaunchOfTheGraphCounts) {
  // Negative control: the graph launched a second time stalls the same way; that one is steady.
  SyntheticTrace s;
  s.Launch("init", -20, 2, -15, 1);
  SlowGraphLaunch(s, 0, 10);
  SlowGraphLaunch(s, 1300, 5000);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle", With({"idle_startup_ops_share=0"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].severity, Severity::kInfo) << f[0].headline;
  EXPECT_GE(f[0].recoverable_ns, 5'000'000u);
  EXPECT_NE(f[0].headline.find("host launching work"), std::string::npos) << f[0].headline;
}

TEST(GpuIdleRule, StartUpGapBeforeTheSteadyPhaseIsNotCounted) {
  auto trace = [](SyntheticTrace& s) {
    s.Launch("init", -5, 2, 0, 1);
    // 50 ms of host work, then a steady phase of 500 back-to-back kernels.
    for (int i = 0; i < 500; ++i) s.Launch("step", 50'000 + i * 10.0 - 8, 2, 50'000 + i * 10.0, 10);
  };
  SyntheticTrace s;
  trace(s);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo) << f[0].headline;
  EXPECT_NEAR(*f[0].number("startup_idle_ns"), 49'999'000, 1);
  SyntheticTrace off;
  trace(off);
  const auto counted = RunRule(off, GpuIdleRule, "gpu.idle", With({"idle_startup_ops_share=0"}));
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_EQ(counted[0].severity, Severity::kError);
  EXPECT_NE(counted[0].headline.find("host-bound"), std::string::npos) << counted[0].headline;
}

// ---- metric collection ----------------------------------------------------------------------------

// Ten 10 us kernels every 100 us, a profiled launch replayed for 200 ms, ten more kernels.
void KernelsAroundAMetricWindow(SyntheticTrace& s, bool with_window) {
  for (int i = 0; i < 10; ++i) s.Kernel("step", i * 100.0, 10);
  if (with_window) {
    s.ProfiledLaunch(cuscope::testing::Config("profiled", 1, 128), 1000, 200'000,
                     {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}});
  }
  for (int i = 0; i < 10; ++i) s.Kernel("step", 201'000 + i * 100.0, 10);
}

TEST(GpuIdleRule, MetricCollectionIsNeitherIdleTimeNorActiveSpan) {
  SyntheticTrace s;
  KernelsAroundAMetricWindow(s, true);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  // 19 gaps of 90 us outside the window; the 200 ms inside it count for nothing.
  EXPECT_EQ(*f[0].number("idle_ns"), 19 * 90'000.0);
  EXPECT_EQ(*f[0].number("active_ns"), 1'910'000.0);
  EXPECT_EQ(*f[0].number("metrics_collection_ns"), 200'000'000.0);
  EXPECT_NEAR(*f[0].number("busy_share"), 200.0 / 1910.0, 1e-9);
  EXPECT_EQ(f[0].recoverable_ns, 1'710'000u);
  EXPECT_NE(f[0].headline.find("of metric collection left out"), std::string::npos) << f[0].headline;
  // The gaps are walked without the window: the replayed launch's 200 ms call is not a cause of
  // idle time, and no gap reported is longer than 90 us.
  EXPECT_EQ(*f[0].number("idle_in_launch_ns"), 0.0);
  EXPECT_EQ(*f[0].number("idle_host_bound_ns"), 19 * 90'000.0);
  EXPECT_EQ(*f[0].number("gaps"), 19.0);
  for (const Span& span : f[0].spans) {
    if (span.label.rfind("idle gap", 0) == 0) {
      EXPECT_EQ(span.end - span.begin, 90'000u) << span.label;
    }
  }
}

TEST(GpuIdleRule, WithoutTheWindowTheSameGapIsIdle) {
  // The control: the 200 ms stretch with no METRICS window over it is idle time.
  SyntheticTrace s;
  KernelsAroundAMetricWindow(s, false);
  const auto f = RunRule(s, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_GT(*f[0].number("idle_ns"), 200'000'000.0);
  EXPECT_EQ(*f[0].number("metrics_collection_ns"), 0.0);
}

TEST(GpuIdleRule, ProfilerSetupInsideTheLaunchCallBeforeTheWindowIsNotIdleEither) {
  // The Range Profiler is set up inside the profiled launch's call (150 ms here) before the replay
  // window opens: the whole call is metric collection.
  SyntheticTrace s;
  for (int i = 0; i < 10; ++i) s.Kernel("step", i * 100.0, 95);
  const uint64_t corr = s.Api("cudaLaunchKernel_v7000", 1000, 300'000);
  s.KernelWith(cuscope::testing::Config("profiled", 1, 128), 151'000, 0, corr, v1::KERNEL_FLAG_REPLAYED);
  s.Metrics(corr, "profiled", 0, 151'000, 150'000, {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}});
  for (int i = 0; i < 10; ++i) s.Kernel("step", 301'000 + i * 100.0, 95);
  EXPECT_TRUE(RunRule(s, GpuIdleRule, "gpu.idle").empty());
  const core::Trace trace = s.Load();
  EXPECT_EQ(TotalLength(Timeline::Build(trace).metric_windows()), 300'000'000u);
}

// Five 10 us kernels on the timeline around three launches replayed for metrics, each measured at
// `replayed_us` (0: no duration collected).
void MostlyProfiledRun(SyntheticTrace& s, double replayed_us) {
  for (int i = 0; i < 3; ++i) s.Kernel("step", i * 100.0, 10);
  for (int i = 0; i < 3; ++i) {
    cuscope::testing::MetricValues values = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}};
    if (replayed_us > 0) values.emplace_back("gpu__time_duration.sum", replayed_us * 1000);
    s.ProfiledLaunch(cuscope::testing::Config("profiled", 1, 128), 300 + i * 100'000.0, 100'000, values);
  }
  for (int i = 0; i < 2; ++i) s.Kernel("step", 300'300 + i * 100.0, 10);
}

TEST(GpuIdleRule, KernelsReplayedForMetricsCountAsBusy) {
  // 50 us on the timeline and 3 x 100 us replayed, in a counted span of 410 us: 85% busy.
  SyntheticTrace profiled;
  MostlyProfiledRun(profiled, 100);
  EXPECT_TRUE(RunRule(profiled, GpuIdleRule, "gpu.idle").empty());
  // Without their measured duration the same run looks 88% idle.
  SyntheticTrace unmeasured;
  MostlyProfiledRun(unmeasured, 0);
  const auto f = RunRule(unmeasured, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("active_ns"), 410'000.0);
  EXPECT_EQ(*f[0].number("replayed_kernel_ns"), 0.0);
  // Measured at 20 us each they fill only part of the idle time: reported, with them counted.
  SyntheticTrace partly;
  MostlyProfiledRun(partly, 20);
  const auto g = RunRule(partly, GpuIdleRule, "gpu.idle");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(*g[0].number("replayed_kernel_ns"), 60'000.0);
  EXPECT_EQ(*g[0].number("idle_ns"), 300'000.0);
}

TEST(GpuIdleRule, ABusyDeviceInterruptedByMetricCollectionIsNotReported) {
  SyntheticTrace s;
  for (int i = 0; i < 10; ++i) s.Kernel("step", i * 100.0, 95);
  s.ProfiledLaunch(cuscope::testing::Config("profiled", 1, 128), 1000, 300'000,
                   {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}});
  for (int i = 0; i < 10; ++i) s.Kernel("step", 301'000 + i * 100.0, 95);
  EXPECT_TRUE(RunRule(s, GpuIdleRule, "gpu.idle").empty());
}

}  // namespace
}  // namespace cuscope::analysis
