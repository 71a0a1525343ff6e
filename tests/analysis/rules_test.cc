// For every rule: a positive case, a negative control, and both sides of each threshold, on
// synthetic timelines.
#include "lib/analysis/rules/rules.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/core/gpu_counters.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;

std::vector<Finding> RunRule(SyntheticTrace& s, std::vector<Finding> (*rule)(const Timeline&, const Thresholds&),
                         const std::string& rule_id, const Thresholds& thresholds = Thresholds()) {
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  std::vector<Finding> out;
  for (Finding& f : rule(timeline, thresholds)) {
    if (f.rule_id == rule_id) out.push_back(std::move(f));
  }
  return out;
}

Thresholds With(std::initializer_list<std::string> overrides) {
  Thresholds t;
  for (const std::string& o : overrides) EXPECT_TRUE(ApplyThresholdOverride(o, &t).ok()) << o;
  return t;
}

bool HasOffender(const Finding& f, const std::string& name) {
  for (const Offender& o : f.offenders) {
    if (o.name.find(name) != std::string::npos) return true;
  }
  return false;
}

// ---- gpu.idle ---------------------------------------------------------------------------------

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

// ---- launch.overhead --------------------------------------------------------------------------

void ShortKernels(SyntheticTrace& s, int count, double kernel_us, double period_us, uint32_t graph_id = 0) {
  for (int i = 0; i < count; ++i) {
    s.Launch(i % 2 ? "tiny_add" : "tiny_mul", i * period_us - 4, 3, i * period_us, kernel_us, 7, 1, graph_id);
  }
}

TEST(LaunchOverheadRule, ManyShortKernelsWithGapsAreReportedWithGraphAdvice) {
  SyntheticTrace s;
  ShortKernels(s, 200, 5, 10);
  const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("short_kernels"), 200);
  EXPECT_NEAR(*f[0].number("median_gap_ns"), 5000, 1);
  EXPECT_NEAR(*f[0].number("launch_rate_per_s"), 200 / 1995e-6, 1000);
  EXPECT_EQ(f[0].recoverable_ns, 199u * 5000u);
  EXPECT_NE(f[0].recommendation.find("CUDA graph"), std::string::npos);
  EXPECT_TRUE(HasOffender(f[0], "tiny_add"));
}

TEST(LaunchOverheadRule, GraphLaunchedKernelsGetFusionAdviceOnly) {
  SyntheticTrace s;
  ShortKernels(s, 200, 5, 10, /*graph_id=*/3);
  const auto f = RunRule(s, LaunchOverheadRule, "launch.overhead");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].recommendation.find("already come from CUDA graphs"), std::string::npos) << f[0].recommendation;
}

TEST(LaunchOverheadRule, LongKernelsAreNotLaunchBound) {
  SyntheticTrace s;
  ShortKernels(s, 200, 500, 505);
  EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead").empty());
}

TEST(LaunchOverheadRule, ThresholdsBothSides) {
  {
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 10);
    EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead", With({"launch_min_kernels=201"})).empty());
  }
  {
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 10);
    EXPECT_EQ(RunRule(s, LaunchOverheadRule, "launch.overhead", With({"launch_min_kernels=200"})).size(), 1u);
  }
  {
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 10);
    EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead", With({"short_kernel_us=5"})).empty());
  }
  {
    // Gaps of 0.5 us behind 5 us kernels: ratio 0.1, under the default 0.25, over 0.05.
    SyntheticTrace s;
    ShortKernels(s, 200, 5, 5.5);
    EXPECT_TRUE(RunRule(s, LaunchOverheadRule, "launch.overhead").empty());
    SyntheticTrace s2;
    ShortKernels(s2, 200, 5, 5.5);
    EXPECT_EQ(RunRule(s2, LaunchOverheadRule, "launch.overhead", With({"launch_gap_to_runtime_ratio=0.05"})).size(), 1u);
  }
}

// ---- sync.points ------------------------------------------------------------------------------

void SyncEveryStep(SyntheticTrace& s, int steps, bool sync_each) {
  for (int i = 0; i < steps; ++i) {
    const double t0 = i * 100.0;
    s.NvtxRange("train_step", t0, t0 + 99);
    s.Launch("step", t0, 3, t0 + 5, 50);
    if (sync_each || i == steps - 1) s.Api("cudaStreamSynchronize_v3020", t0 + 4, 52);
  }
}

TEST(SyncPointsRule, SyncAfterEveryStepIsReportedWithItsSource) {
  SyntheticTrace s;
  SyncEveryStep(s, 20, true);
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("sync_calls"), 20);
  EXPECT_EQ(*f[0].number("stream_syncs"), 20);
  EXPECT_GT(*f[0].number("waiting_share"), 0.5);
  EXPECT_TRUE(HasOffender(f[0], "cudaStreamSynchronize"));
  EXPECT_TRUE(HasOffender(f[0], "train_step"));
  // After each sync the GPU waits for the next step's kernel: 49 us per step but the last.
  EXPECT_GE(f[0].recoverable_ns, 19u * 49'000u);
}

TEST(SyncPointsRule, OneFinalSyncIsNormal) {
  SyntheticTrace s;
  SyncEveryStep(s, 20, false);
  EXPECT_TRUE(RunRule(s, SyncPointsRule, "sync.points").empty());
}

TEST(SyncPointsRule, ThresholdsBothSides) {
  SyntheticTrace calls_above;
  SyncEveryStep(calls_above, 20, true);
  EXPECT_EQ(RunRule(calls_above, SyncPointsRule, "sync.points", With({"sync_min_calls=20"})).size(), 1u);
  SyntheticTrace calls_below;
  SyncEveryStep(calls_below, 20, true);
  EXPECT_TRUE(RunRule(calls_below, SyncPointsRule, "sync.points", With({"sync_min_calls=21"})).empty());
  SyntheticTrace share_below;
  SyncEveryStep(share_below, 20, true);
  EXPECT_TRUE(RunRule(share_below, SyncPointsRule, "sync.points", With({"sync_min_share=0.9"})).empty());
}

TEST(SyncPointsRule, SyncingEveryStepOfALongLoopIsAnError) {
  SyntheticTrace s;
  SyncEveryStep(s, 200, true);
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_GT(*f[0].number("sync_rate_per_s"), 9000);
}

// 14 phases of 15 ms: a 15 ms kernel, then a sync that waits for it while the GPU is busy; the next
// phase is launched right after.
void SyncAtPhaseEnds(SyntheticTrace& s) {
  for (int i = 0; i < 14; ++i) {
    const double t0 = i * 15'010.0;
    s.Launch("phase", t0, 3, t0 + 5, 15'000);
    s.Api("cudaDeviceSynchronize_v3020", t0 + 4, 15'002);
  }
}

TEST(SyncPointsRule, AFewSyncsAtPhaseEndsAreNormal) {
  SyntheticTrace s;
  SyncAtPhaseEnds(s);  // 14 syncs in 210 ms: 66.6/s, though the thread waits 99% of its time
  EXPECT_TRUE(RunRule(s, SyncPointsRule, "sync.points").empty());
  // Under a lower rate threshold it is reported, but the GPU was busy during the waits: info.
  SyntheticTrace lowered;
  SyncAtPhaseEnds(lowered);
  const auto f = RunRule(lowered, SyncPointsRule, "sync.points", With({"sync_min_rate_per_s=66"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(*f[0].number("gpu_idle_during_waits_ns"), 14 * 2'000.0);
  SyntheticTrace above;
  SyncAtPhaseEnds(above);
  EXPECT_TRUE(RunRule(above, SyncPointsRule, "sync.points", With({"sync_min_rate_per_s=67"})).empty());
}

TEST(SyncPointsRule, SmallReadbacksAndImplicitSyncsAreCounted) {
  SyntheticTrace s;
  for (int i = 0; i < 12; ++i) {
    const double t0 = i * 100.0;
    s.Launch("step", t0, 3, t0 + 5, 50);
    const uint64_t corr = s.Api("cudaMemcpy_v3020", t0 + 4, 60);
    s.Memcpy(v1::COPY_KIND_DTOH, t0 + 56, 2, 4, false, v1::MEMORY_KIND_PAGEABLE, 7, corr);
    s.Api("cudaFree_v3020", t0 + 70, 10);
  }
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("small_readbacks"), 12);
  EXPECT_EQ(*f[0].number("implicit_syncs_alloc_free"), 12);
  EXPECT_EQ(*f[0].number("synchronous_copies"), 12);
}

// ---- copies.* ---------------------------------------------------------------------------------

TEST(CopiesRule, CopiesSerializedWithKernelsAreReported) {
  SyntheticTrace s;
  for (int i = 0; i < 10; ++i) {
    s.Memcpy(v1::COPY_KIND_HTOD, i * 200.0, 100, 1 << 20, true);
    s.Kernel("compute", i * 200.0 + 100, 100);
  }
  const auto f = RunRule(s, CopiesRule, "copies.serialized");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("h2d_overlap_share"), 0);
  EXPECT_EQ(f[0].recoverable_ns, 1000'000u);
}

// Copies on their own stream, overlapping kernels by `overlap_us` of each 100 us copy.
void OverlappedCopies(SyntheticTrace& s, double overlap_us) {
  for (int i = 0; i < 10; ++i) {
    s.Kernel("compute", i * 200.0, 100, 13);
    s.Memcpy(v1::COPY_KIND_HTOD, i * 200.0 + 100 - overlap_us, 100, 1 << 20, true, v1::MEMORY_KIND_PINNED, 14);
  }
}

TEST(CopiesRule, OverlappedCopiesRaiseNothing) {
  SyntheticTrace s;
  OverlappedCopies(s, 100);
  EXPECT_TRUE(RunRule(s, CopiesRule, "copies.serialized").empty());
}

TEST(CopiesRule, OverlapThresholdBothSides) {
  SyntheticTrace half;
  OverlappedCopies(half, 50);  // 50% overlapped: fine by default
  EXPECT_TRUE(RunRule(half, CopiesRule, "copies.serialized").empty());
  SyntheticTrace strict;
  OverlappedCopies(strict, 50);
  EXPECT_EQ(RunRule(strict, CopiesRule, "copies.serialized", With({"copy_overlap_min_share=0.6"})).size(), 1u);
}

TEST(CopiesRule, AsyncCopiesFromPageableMemory) {
  SyntheticTrace pageable;
  pageable.Kernel("k", 0, 10);
  pageable.Memcpy(v1::COPY_KIND_HTOD, 20, 30, 1 << 20, true, v1::MEMORY_KIND_PAGEABLE);
  const auto f = RunRule(pageable, CopiesRule, "copies.pageable_async");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_GE(f[0].severity, Severity::kWarning);
  EXPECT_EQ(*f[0].number("copies"), 1);

  SyntheticTrace pinned;
  pinned.Kernel("k", 0, 10);
  pinned.Memcpy(v1::COPY_KIND_HTOD, 20, 30, 1 << 20, true, v1::MEMORY_KIND_PINNED);
  EXPECT_TRUE(RunRule(pinned, CopiesRule, "copies.pageable_async").empty());

  SyntheticTrace below_count;
  below_count.Memcpy(v1::COPY_KIND_HTOD, 20, 30, 1 << 20, true, v1::MEMORY_KIND_PAGEABLE);
  EXPECT_TRUE(RunRule(below_count, CopiesRule, "copies.pageable_async", With({"pageable_async_min_count=2"})).empty());
}

TEST(CopiesRule, SynchronousCopiesSpareSmallHostToDevice) {
  auto one_copy = [](SyntheticTrace& s, v1::CopyKind kind, uint64_t bytes) {
    const uint64_t corr = s.Api("cudaMemcpy_v3020", 0, 40);
    s.Memcpy(kind, 10, 20, bytes, false, v1::MEMORY_KIND_PAGEABLE, 7, corr);
  };
  SyntheticTrace d2h;
  one_copy(d2h, v1::COPY_KIND_DTOH, 1 << 20);
  const auto f = RunRule(d2h, CopiesRule, "copies.sync");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].recoverable_ns, 40'000u);  // the host waited in the call

  SyntheticTrace at_limit;
  one_copy(at_limit, v1::COPY_KIND_HTOD, 65536);
  EXPECT_TRUE(RunRule(at_limit, CopiesRule, "copies.sync").empty());
  SyntheticTrace above_limit;
  one_copy(above_limit, v1::COPY_KIND_HTOD, 65537);
  EXPECT_EQ(RunRule(above_limit, CopiesRule, "copies.sync").size(), 1u);
  SyntheticTrace not_spared;
  one_copy(not_spared, v1::COPY_KIND_HTOD, 4096);
  EXPECT_EQ(RunRule(not_spared, CopiesRule, "copies.sync", With({"sync_copy_spare_h2d_bytes=0"})).size(), 1u);

  SyntheticTrace device_to_device;
  one_copy(device_to_device, v1::COPY_KIND_DTOD, 1 << 20);
  EXPECT_TRUE(RunRule(device_to_device, CopiesRule, "copies.sync").empty());
}

TEST(CopiesRule, SynchronousMemsets) {
  SyntheticTrace sync;
  sync.Memset(0, 10, 4096, false);
  EXPECT_EQ(RunRule(sync, CopiesRule, "memset.sync").size(), 1u);
  SyntheticTrace async;
  async.Memset(0, 10, 4096, true);
  EXPECT_TRUE(RunRule(async, CopiesRule, "memset.sync").empty());
  SyntheticTrace below;
  below.Memset(0, 10, 4096, false);
  EXPECT_TRUE(RunRule(below, CopiesRule, "memset.sync", With({"sync_memset_min_count=2"})).empty());
}

// ---- streams.* --------------------------------------------------------------------------------

// Two streams taking turns: each kernel waits for the other stream's previous one.
void AlternatingStreams(SyntheticTrace& s, double offset_us) {
  for (int i = 0; i < 20; ++i) {
    s.Kernel("a", i * 20.0, 10, 13);
    s.Kernel("b", i * 20.0 + offset_us, 10, 14);
  }
}

TEST(StreamsRule, InterleavedButNeverOverlappingStreamsAreSerialized) {
  SyntheticTrace s;
  AlternatingStreams(s, 10);
  const auto f = RunRule(s, StreamsRule, "streams.serialized");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("streams"), 2);
  EXPECT_EQ(f[0].recoverable_ns, 200'000u);
  EXPECT_TRUE(HasOffender(f[0], "stream 14"));
}

TEST(StreamsRule, OverlappingStreamsAndSequentialPhasesAreFine) {
  SyntheticTrace overlapping;
  AlternatingStreams(overlapping, 5);
  EXPECT_TRUE(RunRule(overlapping, StreamsRule, "streams.serialized").empty());

  SyntheticTrace phases;
  for (int i = 0; i < 20; ++i) phases.Kernel("a", i * 20.0, 10, 13);
  for (int i = 0; i < 20; ++i) phases.Kernel("b", 1000 + i * 20.0, 10, 14);
  EXPECT_TRUE(RunRule(phases, StreamsRule, "streams.serialized").empty());

  SyntheticTrace ordered;
  AlternatingStreams(ordered, 10);
  ordered.StreamWaitEvent(14, 0, 1);
  EXPECT_TRUE(RunRule(ordered, StreamsRule, "streams.serialized").empty());
}

TEST(StreamsRule, SerializedThresholdsBothSides) {
  SyntheticTrace few_ops;
  AlternatingStreams(few_ops, 10);
  EXPECT_TRUE(RunRule(few_ops, StreamsRule, "streams.serialized", With({"stream_min_ops=21"})).empty());
  SyntheticTrace slight;
  AlternatingStreams(slight, 9.99);  // 0.01 us overlap per pair: 0.1% of busy time
  EXPECT_EQ(RunRule(slight, StreamsRule, "streams.serialized").size(), 1u);
  SyntheticTrace slight_strict;
  AlternatingStreams(slight_strict, 9.99);
  EXPECT_TRUE(RunRule(slight_strict, StreamsRule, "streams.serialized", With({"stream_max_overlap_share=0.0001"})).empty());
}

// Stream 14 waits on an event that a 500 us kernel on stream 13 records; its kernel is launched
// at 11 us but starts only when the producer is done.
void EventStall(SyntheticTrace& s, double consumer_start_us) {
  s.Kernel("producer", 0, 500, 13);
  s.StreamWaitEvent(14, 10, 0.5);
  s.Launch("consumer", 11, 1, consumer_start_us, 50, 14);
}

TEST(StreamsRule, EventWaitStallingAStream) {
  SyntheticTrace s;
  EventStall(s, 500);
  const auto f = RunRule(s, StreamsRule, "streams.event_wait");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("stall_ns"), 488'000);
  EXPECT_TRUE(HasOffender(f[0], "consumer"));

  SyntheticTrace no_stall;
  EventStall(no_stall, 13);
  EXPECT_TRUE(RunRule(no_stall, StreamsRule, "streams.event_wait").empty());

  SyntheticTrace above;
  EventStall(above, 500);
  EXPECT_TRUE(RunRule(above, StreamsRule, "streams.event_wait", With({"event_wait_min_share=0.9"})).empty());
}

// Rounds of: stream 13 runs a 100 us producer then an unrelated 1 ms kernel; stream 14 waits on an
// event and runs a 500 us consumer. With the event recorded after the long kernel (`late`), the
// consumer starts when the long kernel ends and runs alone: the streams take turns. Recorded after
// the producer, the consumer runs beside the long kernel.
void ProducerConsumerRounds(SyntheticTrace& s, bool late, int rounds = 20) {
  const double period = late ? 1600 : 1100;
  for (int r = 0; r < rounds; ++r) {
    const double t = r * period;
    s.Kernel("producer", t, 100, 13);
    s.Kernel("unrelated_long", t + 100, 1000, 13);
    s.StreamWaitEvent(14, t + 1, 0.5);
    s.Launch("consumer", t + 2, 1, late ? t + 1100 : t + 100, 500, 14);
  }
}

TEST(StreamsRule, EventWaitThatSerializesStreamsIsReported) {
  SyntheticTrace s;
  ProducerConsumerRounds(s, true);
  const auto f = RunRule(s, StreamsRule, "streams.event_wait");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_GE(f[0].severity, Severity::kWarning);
  // Each round the consumer ran 500 us alone that could have overlapped the long kernel.
  EXPECT_NEAR(*f[0].number("lost_ns"), 20 * 500'000.0, 1.0);
  EXPECT_EQ(f[0].recoverable_ns, 20u * 500'000u);
  EXPECT_TRUE(HasOffender(f[0], "consumer"));
}

TEST(StreamsRule, EventWaitForAProducerWhileTheGpuIsBusyIsPipelining) {
  SyntheticTrace s;
  ProducerConsumerRounds(s, false);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  for (const Finding& f : StreamsRule(timeline, Thresholds())) {
    EXPECT_NE(f.rule_id, "streams.event_wait") << f.headline;
  }
}

TEST(StreamsRule, EventWaitLostShareThresholdBothSides) {
  // Lost 10 ms of a 31.6 ms active span: 31.6%.
  SyntheticTrace below;
  ProducerConsumerRounds(below, true);
  EXPECT_TRUE(RunRule(below, StreamsRule, "streams.event_wait", With({"event_wait_min_share=0.32"})).empty());
  SyntheticTrace above;
  ProducerConsumerRounds(above, true);
  EXPECT_EQ(RunRule(above, StreamsRule, "streams.event_wait", With({"event_wait_min_share=0.31"})).size(), 1u);
}

// ---- hot.kernels ------------------------------------------------------------------------------

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

// ---- metric collection and gpu.idle --------------------------------------------------------------

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

// ---- gpu.throttle -------------------------------------------------------------------------------

namespace counter = core::counter;

// A 100 ms kernel; NVML every 10 ms: nothing for 40 ms, the software power cap for 30 ms, thermal
// slowdown for 10 ms, nothing for the last 20 ms. The SM clock drops from 1980 to 1485 MHz meanwhile.
void ThrottledRun(SyntheticTrace& s, bool with_clock = true) {
  s.TimelineWindow(0, 100'000);
  s.Kernel("work", 0, 100'000);
  s.NvmlReadings(counter::kClocksEventReasons, 0, 10'000,
                 {0, 0, 0, 0, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap,
                  counter::kReasonHwThermalSlowdown, 0, 0});
  if (with_clock) {
    s.NvmlReadings(counter::kSmClockMhz, 0, 10'000, {1980, 1980, 1980, 1980, 1485, 1485, 1485, 1485, 1980, 1980});
  }
}

TEST(ThrottleRule, PowerAndThermalSlowdownDuringKernelsIsReportedWithTheClock) {
  SyntheticTrace s;
  ThrottledRun(s);
  const auto f = RunRule(s, ThrottleRule, "gpu.throttle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].headline,
            "GPU 0 ran 40.0% of its kernel time (40.000 ms of 100.000 ms) with its clocks held down by power and heat: "
            "software power cap, hardware thermal slowdown; SM clock 1485 MHz then, 1980 MHz at most");
  EXPECT_DOUBLE_EQ(*f[0].number("throttled_share"), 0.4);
  EXPECT_DOUBLE_EQ(*f[0].number("sw_power_cap_kernel_ns"), 30e6);
  EXPECT_DOUBLE_EQ(*f[0].number("hw_thermal_slowdown_kernel_ns"), 10e6);
  EXPECT_DOUBLE_EQ(*f[0].number("sm_clock_throttled_mhz"), 1485);
  EXPECT_DOUBLE_EQ(*f[0].number("sm_clock_max_mhz"), 1980);
  // 40 ms at a quarter of the clock lost: up to 10 ms, 10% of the span: a warning.
  EXPECT_EQ(f[0].recoverable_ns, 10'000'000u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  ASSERT_EQ(f[0].offenders.size(), 2u);
  EXPECT_EQ(f[0].offenders[0].name, "software power cap");
  EXPECT_EQ(f[0].offenders[0].time_ns, 30'000'000u);
  EXPECT_NE(f[0].recommendation.find("not comparable with an unthrottled run"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("nvidia-smi -q -d POWER"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("check cooling"), std::string::npos);
}

TEST(ThrottleRule, ThrottlingWhileTheGpuIdlesIsNotReported) {
  SyntheticTrace s;
  s.Kernel("before", 0, 30'000);
  s.Kernel("after", 70'000, 30'000);
  // The power cap holds from 30 to 70 ms, exactly while no kernel runs.
  s.NvmlReadings(counter::kClocksEventReasons, 0, 10'000,
                 {0, 0, 0, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap,
                  counter::kReasonSwPowerCap, 0, 0, 0});
  EXPECT_TRUE(RunRule(s, ThrottleRule, "gpu.throttle").empty());
}

TEST(ThrottleRule, IdleAndApplicationClockReasonsAreNotThrottling) {
  SyntheticTrace s;
  s.Kernel("work", 0, 100'000);
  const double idle = counter::kReasonGpuIdle;
  const double app = counter::kReasonApplicationsClocksSetting | counter::kReasonGpuIdle;
  s.NvmlReadings(counter::kClocksEventReasons, 0, 10'000, {idle, idle, app, app, app, idle, idle, idle, idle, idle});
  EXPECT_TRUE(RunRule(s, ThrottleRule, "gpu.throttle").empty());
}

TEST(ThrottleRule, TheKernelShareThresholdHasTwoSides) {
  // A 1 ms kernel; the power cap is read at 0.950 ms (or 0.951 ms) and holds one period.
  auto run = [](double capped_at_us, const Thresholds& t) {
    SyntheticTrace s;
    s.Kernel("work", 0, 1000);
    s.Counter(counter::kClocksEventReasons, v1::COUNTER_SOURCE_NVML,
              {{0, 0, 0}, {capped_at_us, 0, static_cast<double>(counter::kReasonSwPowerCap)}});
    return RunRule(s, ThrottleRule, "gpu.throttle", t);
  };
  EXPECT_EQ(run(950, Thresholds()).size(), 1u);  // 50 us of 1000: exactly 5%
  EXPECT_TRUE(run(951, Thresholds()).empty());   // 49 us: 4.9%
  EXPECT_TRUE(run(950, With({"throttle_min_kernel_share=0.06"})).empty());
  EXPECT_EQ(run(951, With({"throttle_min_kernel_share=0.049"})).size(), 1u);
}

TEST(ThrottleRule, WithoutTheSmClockTheLossIsNotEstimated) {
  SyntheticTrace s;
  ThrottledRun(s, /*with_clock=*/false);
  const auto f = RunRule(s, ThrottleRule, "gpu.throttle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].headline.find("; the SM clock was not sampled"), std::string::npos) << f[0].headline;
  EXPECT_EQ(f[0].recoverable_ns, 0u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_FALSE(f[0].number("sm_clock_throttled_mhz").has_value());
}

TEST(ThrottleRule, NoCountersNoFinding) {
  SyntheticTrace s;
  s.Kernel("work", 0, 1000);
  EXPECT_TRUE(RunRule(s, ThrottleRule, "gpu.throttle").empty());
}

// ---- thresholds -------------------------------------------------------------------------------

TEST(ThresholdsTest, OverridesByNameAndRejectsBadInput) {
  Thresholds t;
  EXPECT_TRUE(ApplyThresholdOverride("short_kernel_us=7.5", &t).ok());
  EXPECT_EQ(t.short_kernel_us, 7.5);
  EXPECT_FALSE(ApplyThresholdOverride("no_such_threshold=1", &t).ok());
  EXPECT_FALSE(ApplyThresholdOverride("short_kernel_us=abc", &t).ok());
  EXPECT_FALSE(ApplyThresholdOverride("short_kernel_us", &t).ok());
  EXPECT_FALSE(ApplyThresholdOverride("short_kernel_us=-1", &t).ok());
  EXPECT_EQ(t.short_kernel_us, 7.5);
}

}  // namespace
}  // namespace cuscope::analysis
