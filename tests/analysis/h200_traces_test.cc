// The analyzer on traces recorded on the H200 and the H100 (traces/): each example program's top
// finding names its symptom on both GPUs, its fixed twin raises no warning or error of that kind,
// the kernels profiled for metrics get the verdicts they were built to show, and the H100 traces
// (recorded with today's defaults) hold the features they were recorded for. A change to a rule that breaks what real
// programs look like fails here, not only on the synthetic timelines.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lib/analysis/analyzer.h"
#include "lib/analysis/kernel_internals.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"

namespace cuscope::analysis {
namespace {

const std::string kTraces = CUSCOPE_TRACES_DIR;

Analysis AnalyzeFile(const std::string& name) {
  auto trace = core::LoadTrace(kTraces + "/" + name);
  EXPECT_TRUE(trace.ok()) << name << ": " << trace.status();
  if (!trace.ok()) return {};
  return Analyze(*trace, AnalyzeOptions{});
}

bool RaisesAtLeastWarning(const Analysis& a, const std::string& rule_prefix) {
  for (const Finding& f : a.findings) {
    if (f.rule_id.rfind(rule_prefix, 0) == 0 && f.severity >= Severity::kWarning) return true;
  }
  return false;
}

struct Example {
  const char* symptom;
  std::vector<const char*> twins;
  std::vector<const char*> top_rules;  // the top finding is one of these
  const char* kind;                    // rule id prefix the twins must not raise
};

TEST(H200TracesTest, EachExampleNamesItsSymptomAndItsTwinDoesNot) {
  const std::vector<Example> examples = {
      {"launch_overhead.cuscope",
       {"launch_overhead_fixed_fused.cuscope", "launch_overhead_fixed_graph.cuscope"},
       {"gpu.idle", "launch.overhead"},
       "launch.overhead"},
      {"sync_every_step.cuscope", {"sync_every_step_fixed.cuscope"}, {"sync.points"}, "sync.points"},
      {"pageable_copies.cuscope", {"pageable_copies_fixed.cuscope"}, {"copies.pageable_async"}, "copies."},
      {"legacy_default_stream.cuscope", {"legacy_default_stream_fixed.cuscope"}, {"streams.serialized"}, "streams."},
      {"event_wait_stall.cuscope", {"event_wait_stall_fixed.cuscope"}, {"streams.event_wait"}, "streams."},
  };
  for (const std::string& folder : {std::string("h200_examples/"), std::string("h100/")}) {
    for (const Example& e : examples) {
      SCOPED_TRACE(folder);
      const Analysis a = AnalyzeFile(folder + e.symptom);
      ASSERT_FALSE(a.findings.empty()) << e.symptom;
      const Finding& top = a.findings.front();
      EXPECT_GE(top.severity, Severity::kWarning) << e.symptom;
      bool named = false;
      for (const char* rule : e.top_rules) named |= top.rule_id == rule;
      // Top-down, an idle GPU comes first; it names the symptom when its main cause is the host
      // waiting in synchronization calls.
      if (std::string(e.symptom) == "sync_every_step.cuscope" && top.rule_id == "gpu.idle") {
        named = top.headline.find("mostly host in a synchronization call") != std::string::npos;
      }
      EXPECT_TRUE(named) << e.symptom << ": top finding " << top.rule_id;
      for (const char* twin : e.twins) {
        const Analysis t = AnalyzeFile(folder + twin);
        EXPECT_FALSE(RaisesAtLeastWarning(t, e.kind)) << twin;
        if (std::string(e.symptom) == "launch_overhead.cuscope") {
          EXPECT_FALSE(RaisesAtLeastWarning(t, "gpu.idle")) << twin;
        }
      }
    }
  }
}

// PyTorch's .item() after every step of three kernels (examples/torch_item_sync.py): idle GPU and
// launch overhead come first, and sync.points names the read-backs and their cadence; the twin
// that reads back once per 100 steps raises no sync.points.
TEST(H200TracesTest, AnItemReadBackEveryStepIsNamedAndItsTwinIsNot) {
  const Analysis a = AnalyzeFile("h200_examples/torch_item_sync.cuscope");
  const Finding* sync = nullptr;
  for (const Finding& f : a.findings) {
    if (f.rule_id == "sync.points") sync = &f;
  }
  ASSERT_NE(sync, nullptr);
  EXPECT_GE(sync->severity, Severity::kWarning);
  EXPECT_EQ(*sync->number("small_readbacks"), 2200);
  EXPECT_NE(sync->headline.find("one per 3.0 kernels"), std::string::npos) << sync->headline;
  EXPECT_NE(sync->recommendation.find("accumulate on the GPU"), std::string::npos);
  EXPECT_FALSE(RaisesAtLeastWarning(AnalyzeFile("h200_examples/torch_item_sync_fixed.cuscope"), "sync.points"));
}

const Finding* InternalsOf(const Analysis& a, const std::string& kernel) {
  for (const Finding& f : a.findings) {
    if (f.rule_id == "kernel.internals" && f.headline.find(kernel) != std::string::npos) return &f;
  }
  return nullptr;
}

core::Trace LoadShipped(const std::string& name) {
  auto trace = core::LoadTrace(kTraces + "/" + name);
  EXPECT_TRUE(trace.ok()) << name << ": " << trace.status();
  return trace.ok() ? std::move(*trace) : core::Trace();
}

// What each H100 trace was recorded to show (scripts/record_shipped_traces.sh, traces/h100/README.md).
TEST(H100TracesTest, TheShippedTracesShowWhatTheyWereRecordedFor) {
  // Launch stacks down to Python lines, for kernels launched directly and from a replayed graph.
  for (const char* name : {"h100/torch_launch_sites_stacks.cuscope", "h100/torch_graph_steps_stacks.cuscope"}) {
    const core::Trace t = LoadShipped(name);
    EXPECT_FALSE(t.launch_stacks.empty()) << name;
  }
  const core::Trace graph = LoadShipped("h100/torch_graph_steps_stacks.cuscope");
  size_t graph_kernels = 0;
  for (const core::KernelRow& k : graph.kernels) graph_kernels += k.graph_id != 0;
  EXPECT_GT(graph_kernels, 100u);
  EXPECT_FALSE(graph.graph_nodes.empty());
  size_t fixed_graph_kernels = 0;
  for (const core::KernelRow& k : LoadShipped("h100/launch_overhead_fixed_graph.cuscope").kernels) {
    fixed_graph_kernels += k.graph_id != 0;
  }
  EXPECT_EQ(fixed_graph_kernels, 20000u);  // the example's 20,000 kernels, one graph launch
  // NVTX steps in the flight recorder's snapshot.
  const core::Trace snapshot = LoadShipped("h100/torch_flight_snapshot.cuscope");
  EXPECT_GT(snapshot.nvtx.size(), 1000u);
  EXPECT_GT(snapshot.kernels.size(), 1000u);
  // Monitor intervals instead of records.
  const core::Trace monitor = LoadShipped("h100/torch_monitor.cuscope");
  EXPECT_FALSE(monitor.monitor_intervals.empty());
  EXPECT_TRUE(monitor.kernels.empty());
  // Roofline metrics: cuBLAS's GEMMs compute-bound with a FLOP rate, the elementwise kernels on DRAM.
  const Analysis roofline = AnalyzeFile("h100/torch_gemm_roofline.cuscope");
  const Finding* gemm = InternalsOf(roofline, "nvjet_sm90_hsh");
  ASSERT_NE(gemm, nullptr);
  EXPECT_NE(gemm->headline.find("compute-bound: tensor FP16 FLOP rate"), std::string::npos) << gemm->headline;
  const Finding* abs = InternalsOf(roofline, "AbsFunctor");
  ASSERT_NE(abs, nullptr);
  EXPECT_NE(abs->headline.find("memory-bound: DRAM"), std::string::npos) << abs->headline;
}

TEST(H200TracesTest, ProfiledKernelsGetTheVerdictTheyWereBuiltFor) {
  const Analysis ki = AnalyzeFile("h200_kernel_internals_metrics.cuscope");
  const struct {
    const char* kernel;
    const char* verdict;
  } want[] = {{"stream_triad", "memory-bound"}, {"fma_chains", "compute-bound"}, {"pointer_chase", "latency-bound"}};
  for (const auto& w : want) {
    const Finding* f = InternalsOf(ki, w.kernel);
    ASSERT_NE(f, nullptr) << w.kernel;
    EXPECT_NE(f->headline.find(w.verdict), std::string::npos) << f->headline;
  }
  // The low-occupancy kernel: limited by its shared memory, and a problem since neither roof is near.
  const Finding* chase = InternalsOf(ki, "pointer_chase");
  ASSERT_NE(chase, nullptr);
  EXPECT_NE(chase->recommendation.find("limited by shared memory"), std::string::npos) << chase->recommendation;

  // cuBLAS's FP16 GEMM reaches ~95% memory throughput through L1 with DRAM at ~20%: compute-bound.
  const Analysis gemm = AnalyzeFile("h200_torch_gemm_metrics.cuscope");
  for (const char* kernel : {"nvjet_sm90_hsh", "sm80_xmma_gemm_f32f32"}) {
    const Finding* f = InternalsOf(gemm, kernel);
    ASSERT_NE(f, nullptr) << kernel;
    // The verdict follows the launch shape; "not memory-bound" may follow as the explanation.
    EXPECT_NE(f->headline.find("]: compute-bound"), std::string::npos) << f->headline;
    EXPECT_NE(f->headline.find("not DRAM: not memory-bound"), std::string::npos) << f->headline;
  }
}

TEST(H200TracesTest, BaselineAgreesWithTheTimelineOfARealRun) {
  auto trace = core::LoadTrace(kTraces + "/h200_known_work.cuscope");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Analysis a = Analyze(*trace, AnalyzeOptions{});
  const Baseline& b = a.baseline;
  // The collector's session window (opened at start-up, closed at exit) holds every kernel.
  EXPECT_TRUE(b.windows_recorded);
  EXPECT_EQ(b.window_count, 1u);
  EXPECT_GE(b.wall_ns, a.summary.span_ns());
  ASSERT_EQ(a.summary.devices_size(), 1);
  EXPECT_EQ(b.kernels, a.summary.devices(0).kernels());
  EXPECT_EQ(b.kernel_ns, a.summary.devices(0).kernel_time_ns());
  EXPECT_LE(b.busy_ns, b.kernel_ns);
  EXPECT_LE(b.busy_ns, a.summary.devices(0).busy_ns());  // copies are busy for the timeline, not for the SMs
  EXPECT_NEAR(b.utilization, static_cast<double>(b.busy_ns) / static_cast<double>(b.wall_ns), 1e-12);
  EXPECT_NEAR(b.launches_per_second, static_cast<double>(b.kernels) / (static_cast<double>(b.wall_ns) * 1e-9), 1e-6);
  // Nothing of the top-down or the counters in a trace that has neither.
  EXPECT_FALSE(a.top_down.present);
  EXPECT_EQ(a.gpu_counters.samples, 0u);
}

// A PyTorch loop under --top-down --delay 2 --duration 0.5 (H200, 4 December 2026): CUPTI gave all
// 10,037 kernels of the window, their calls and the metric rows correlation id 3, and the collector
// flagged every kernel as replayed. The analyzer says so and keeps the kernels on the timeline.
TEST(H200TracesTest, ATraceWithOneCorrelationIdKeepsItsKernelsAndSaysWhy) {
  auto trace = core::LoadTrace(kTraces + "/h200_torch_top_down_stuck_correlation.cuscope");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Timeline timeline = Timeline::Build(*trace);
  ASSERT_TRUE(timeline.stuck_correlation().has_value());
  EXPECT_EQ(timeline.stuck_correlation()->id, 3u);
  EXPECT_EQ(timeline.kernel_count(), trace->kernels.size());
  EXPECT_EQ(timeline.replayed_kernel_count(), 0u);
  const Analysis a = Analyze(*trace, AnalyzeOptions{});
  bool warned = false;
  for (const std::string& w : a.warnings) warned |= w.find("the same one (3)") != std::string::npos;
  EXPECT_TRUE(warned);
  ASSERT_EQ(a.summary.devices_size(), 1);
  EXPECT_EQ(a.summary.devices(0).kernels(), trace->kernels.size());
  EXPECT_GT(a.baseline.utilization, 0.5) << "the window's GPU was busy: its kernels are on the timeline";
}

// The one-run top-down a newcomer without a GPU can read: PyTorch's transformer block under
// `--top-down --duration 1` on the H200 (4 December 2026), GPU counters sampled in the window, then
// the three hottest kernels profiled. Every kernel keeps its own correlation id.
TEST(H200TracesTest, TheShippedTopDownHasCountersAndAVerdictPerHotKernel) {
  auto trace = core::LoadTrace(kTraces + "/h200_torch_top_down.cuscope");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Timeline timeline = Timeline::Build(*trace);
  EXPECT_FALSE(timeline.stuck_correlation().has_value());
  const Analysis a = Analyze(*trace, AnalyzeOptions{});
  EXPECT_GT(a.gpu_counters.samples, 100u);
  ASSERT_TRUE(a.top_down.present);
  ASSERT_EQ(a.top_down.choices.size(), 1u);
  ASSERT_EQ(a.top_down.choices[0].kernels.size(), 3u);
  for (const HotKernelEntry& k : a.top_down.choices[0].kernels) {
    ASSERT_TRUE(k.verdict.has_value()) << k.Label();
    EXPECT_NE(a.kernel_verdicts[*k.verdict].bottleneck, Bottleneck::kUndetermined) << k.Label();
  }
}

}  // namespace
}  // namespace cuscope::analysis
