#include "lib/report/diff.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "lib/analysis/analysis_text.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"
#include "lib/report/run_figures.h"
#include "tests/report/report_test_traces.h"

namespace cuscope::report {
namespace {

using ::cuscope::testing::FusedRun;
using ::cuscope::testing::LaunchBoundRun;
using ::cuscope::testing::SyntheticTrace;

RunFigures Load(const std::string& path) {
  absl::StatusOr<RunFigures> f = LoadRunFigures(path);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : RunFigures();
}

// The active span and the busy share that diff and the report use are analyze's, on traces whose
// devices have time outside their capture windows (the top-down) or metric replays counted busy.
TEST(RunFiguresTest, ActiveSpanAndBusyShareAreAnalyzes) {
  for (const char* name : {"h200_torch_top_down.cuscope", "h200_kernel_internals_metrics.cuscope"}) {
    absl::StatusOr<core::Trace> trace = core::LoadTrace(std::string(CUSCOPE_TRACES_DIR) + "/" + name);
    ASSERT_TRUE(trace.ok()) << name;
    const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
    const analysis::Analysis analysis = analysis::Analyze(timeline, analysis::AnalyzeOptions());
    const RunFigures f = FiguresOf(timeline, analysis, name);
    // Against gpu.idle's own figures (computed by the rule from the timeline) and the GPU line's text.
    const analysis::Finding* idle = nullptr;
    for (const analysis::Finding& finding : analysis.findings) {
      if (finding.rule_id == "gpu.idle") idle = &finding;
    }
    ASSERT_NE(idle, nullptr) << name;
    EXPECT_EQ(f.gpu_active_ns, static_cast<uint64_t>(*idle->number("active_ns"))) << name;
    EXPECT_NEAR(f.gpu_busy_share, *idle->number("busy_share"), 1e-9) << name;
    const std::string text = analysis::RenderAnalysisText(analysis, name, 10, core::KernelNameStyle::kBase);
    EXPECT_TRUE(absl::StrContains(text, absl::StrCat("of its active ", analysis::FormatDuration(f.gpu_active_ns))))
        << name;
    // The steady state (diff's default span) counts replays busy too: never less busy than the
    // whole active span's share minus start-up.
    EXPECT_GT(f.steady_gpu_busy_share, 0.0) << name;
  }
}

// One steady state: the time `diff` compares by default is the steady state gpu.idle judges idle
// time on (its steady_span_ns and its headline), on every shipped trace that has GPU work.
TEST(RunFiguresTest, TheSteadyStateIsGpuIdlesOnEveryShippedTrace) {
  size_t traces = 0, judged = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(CUSCOPE_TRACES_DIR)) {
    if (entry.path().extension() != ".cuscope") continue;
    const std::string name = entry.path().string();
    absl::StatusOr<core::Trace> trace = core::LoadTrace(name);
    ASSERT_TRUE(trace.ok()) << name;
    const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
    if (timeline.devices().size() != 1 || timeline.devices()[0].ops.empty()) continue;
    ++traces;
    const analysis::Analysis analysis = analysis::Analyze(timeline, analysis::AnalyzeOptions());
    const RunFigures f = FiguresOf(timeline, analysis, name);
    const analysis::SteadyState steady =
        analysis::SteadyStateOf(timeline, timeline.devices()[0], analysis::Thresholds().idle_startup_ops_share);
    EXPECT_EQ(f.steady_ns, steady.counted_ns) << name;
    EXPECT_EQ(f.steady_gpu_active_ns, steady.counted_ns) << name;
    // diff compares that time.
    const DiffResult d = DiffRuns({f}, {f});
    EXPECT_EQ(d.end_to_end.name, "steady_state") << name;
    EXPECT_EQ(d.end_to_end.base.mean, static_cast<double>(f.steady_ns)) << name;
    for (const analysis::Finding& finding : analysis.findings) {
      if (finding.rule_id != "gpu.idle") continue;
      ++judged;
      EXPECT_EQ(static_cast<uint64_t>(*finding.number("steady_span_ns")), f.steady_ns) << name;
      if (*finding.number("steady_idle_ns") < *finding.number("idle_ns")) {
        EXPECT_TRUE(absl::StrContains(finding.headline, absl::StrCat(" idle of ", analysis::FormatDuration(f.steady_ns))))
            << name << ": " << finding.headline;
      }
    }
  }
  EXPECT_GE(traces, 25u);
  EXPECT_GE(judged, 5u);
}

bool HasRule(const std::vector<FindingDelta>& list, const std::string& rule) {
  for (const FindingDelta& f : list) {
    if (f.rule_id == rule) return true;
  }
  return false;
}

// A run's figures without a trace: for the statistics alone.
RunFigures Figures(double end_to_end_ns, double busy = 0.5, std::vector<FindingFigure> findings = {}) {
  RunFigures r;
  r.label = "run";
  r.end_to_end_ns = static_cast<uint64_t>(end_to_end_ns);
  r.steady_ns = r.end_to_end_ns;
  r.gpu_busy_share = busy;
  r.steady_gpu_busy_share = busy;
  r.kernel_time_ns = r.end_to_end_ns / 2;
  r.findings = std::move(findings);
  return r;
}

TEST(RunFiguresTest, FromASyntheticTrace) {
  const RunFigures f = Load(LaunchBoundRun());
  // 400 launches of 20 us, the last kernel 1 us after its call, 4 us long: 8005 us end to end.
  EXPECT_EQ(f.end_to_end_ns, 8'005'000u);
  EXPECT_EQ(f.kernel_count, 400u);
  EXPECT_EQ(f.kernel_time_ns, 1'600'000u);
  ASSERT_EQ(f.kernels.size(), 1u);
  EXPECT_EQ(f.kernels[0].name, "_Z4stepPfi");
  EXPECT_EQ(f.kernels[0].display_name, "step");  // the short base name
  EXPECT_EQ(f.kernels[0].count, 400u);
  // GPU active from the first kernel (21 us) to the last one's end (8005 us).
  EXPECT_EQ(f.gpu_active_ns, 7'984'000u);
  EXPECT_NEAR(f.gpu_busy_share, 1.6 / 7.984, 1e-9);
  ASSERT_NE(f.top_finding(), nullptr);
}

// Two timeline windows, the GPU busy throughout each and not recorded between them: the time
// between is not idle, and the busy share is that of the windows.
TEST(RunFiguresTest, TimeOutsideTheCaptureWindowsIsNotIdle) {
  SyntheticTrace t;
  t.AddDevice(::cuscope::testing::H200Device());
  t.TimelineWindow(0, 1000);
  t.TimelineWindow(3000, 4000);
  t.Kernel("first", 0, 1000);
  t.Kernel("second", 3000, 1000);
  const RunFigures f = Load(t.Write());
  EXPECT_EQ(f.gpu_busy_ns, 2'000'000u);
  EXPECT_EQ(f.gpu_active_ns, 2'000'000u);
  EXPECT_DOUBLE_EQ(f.gpu_busy_share, 1.0);
}

TEST(DiffTest, FusingTheLaunchLoopHelped) {
  const DiffResult d = DiffRuns({Load(LaunchBoundRun())}, {Load(FusedRun())});
  EXPECT_EQ(d.verdict, Verdict::kHelped);
  // Steady state, by default: BASE from its 5th kernel (1% of 400 operations; 101 us) to 8005 us;
  // NEW (20 operations: no start-up to leave out) from its first kernel at 21 us to 1621 us.
  EXPECT_EQ(d.end_to_end.name, "steady_state");
  EXPECT_DOUBLE_EQ(d.end_to_end.base.mean, 7'904'000);
  EXPECT_DOUBLE_EQ(d.end_to_end.next.mean, 1'600'000);
  EXPECT_TRUE(absl::StrContains(d.conclusion, "NEW is 4.94x faster in steady state (7.904 ms -> 1.600 ms)"))
      << d.conclusion;
  EXPECT_TRUE(absl::StrContains(d.conclusion, "GPU busy 20.0% -> 100.0%")) << d.conclusion;
  EXPECT_FALSE(d.end_to_end.noise_test);
  // Kernels: the loop's kernel went away, the fused one is new.
  ASSERT_EQ(d.kernels.size(), 2u);
  EXPECT_EQ(d.kernels[0].name, "_Z4stepPfi");  // 1.6 ms, the larger of the two
  EXPECT_DOUBLE_EQ(d.kernels[0].base_count, 400);
  EXPECT_DOUBLE_EQ(d.kernels[0].new_count, 0);
  EXPECT_DOUBLE_EQ(d.kernels[0].change_ns(), -1'600'000);
  EXPECT_DOUBLE_EQ(*d.kernels[0].change_relative(), -1.0);
  EXPECT_DOUBLE_EQ(d.kernels[1].new_total_ns, 1'600'000);
  EXPECT_FALSE(d.kernels[1].change_relative().has_value());
  // The launch-bound findings are resolved.
  EXPECT_TRUE(HasRule(d.resolved, "gpu.idle")) << RenderDiffText(d);
  EXPECT_TRUE(HasRule(d.resolved, "launch.overhead")) << RenderDiffText(d);
  EXPECT_FALSE(HasRule(d.appeared, "gpu.idle"));
}

TEST(DiffTest, TheOtherWayRoundGotWorseAndTheFindingsAreNew) {
  const DiffResult d = DiffRuns({Load(FusedRun())}, {Load(LaunchBoundRun())});
  EXPECT_EQ(d.verdict, Verdict::kWorse);
  EXPECT_TRUE(absl::StrContains(d.conclusion, "NEW is 4.94x slower in steady state")) << d.conclusion;
  EXPECT_TRUE(HasRule(d.appeared, "gpu.idle"));
  EXPECT_TRUE(HasRule(d.appeared, "launch.overhead"));
  EXPECT_TRUE(d.resolved.empty() || !HasRule(d.resolved, "gpu.idle"));
}

TEST(DiffTest, ASmallChangeOfOneRunIsNoClearChange) {
  // Launch calls of 20 us vs 20.2 us: 1% longer end to end.
  const DiffResult d = DiffRuns({Load(LaunchBoundRun(20))}, {Load(LaunchBoundRun(20.2))});
  EXPECT_EQ(d.verdict, Verdict::kNoChange) << d.conclusion;
  EXPECT_TRUE(absl::StrContains(d.conclusion, "No clear change")) << d.conclusion;
  EXPECT_TRUE(absl::StrContains(d.rule, "at least 2%")) << d.rule;
  EXPECT_TRUE(d.resolved.empty());
  EXPECT_TRUE(d.appeared.empty());
  EXPECT_FALSE(d.persisting.empty());
}

TEST(DiffTest, RepeatedRunsWithinNoise) {
  // Runs that scatter by ~4% around similar means.
  const std::vector<RunFigures> base = {Load(LaunchBoundRun(20)), Load(LaunchBoundRun(21)), Load(LaunchBoundRun(19.4))};
  const std::vector<RunFigures> next = {Load(LaunchBoundRun(20.6)), Load(LaunchBoundRun(19.3)),
                                        Load(LaunchBoundRun(20.9))};
  const DiffResult d = DiffRuns(base, next);
  EXPECT_TRUE(d.end_to_end.noise_test);
  EXPECT_EQ(d.verdict, Verdict::kWithinNoise) << d.conclusion;
  EXPECT_TRUE(absl::StrContains(d.conclusion, "No change beyond run-to-run noise")) << d.conclusion;
  EXPECT_TRUE(absl::StrContains(d.rule, "Welch's t-test")) << d.rule;
  EXPECT_EQ(d.end_to_end.base.n(), 3u);
  EXPECT_LT(*d.end_to_end.t_statistic, d.end_to_end.t_critical);
}

TEST(DiffTest, RepeatedRunsBeyondNoise) {
  const std::vector<RunFigures> base = {Load(LaunchBoundRun(20)), Load(LaunchBoundRun(20.2))};
  const std::vector<RunFigures> next = {Load(FusedRun(80)), Load(FusedRun(81))};
  const DiffResult d = DiffRuns(base, next);
  EXPECT_EQ(d.verdict, Verdict::kHelped) << d.conclusion;
  EXPECT_TRUE(absl::StrContains(d.conclusion, "beyond run-to-run noise (Welch's t = ")) << d.conclusion;
  EXPECT_TRUE(absl::StrContains(d.conclusion, "means of 2 and 2 runs")) << d.conclusion;
  EXPECT_GT(*d.end_to_end.t_statistic, d.end_to_end.t_critical);
}

TEST(DiffStatisticsTest, WelchTestByHand) {
  // BASE 100, 102, 98 (mean 100, s 2); NEW 90, 91, 89 (mean 90, s 1).
  // se = sqrt(4/3 + 1/3) = 1.291; t = 7.746; df = (5/3)^2 / ((4/3)^2/2 + (1/3)^2/2) = 2.94 -> 2 -> 4.303.
  const Comparison c = Compare("end_to_end", "ns", {100, 102, 98}, {90, 91, 89}, DiffOptions());
  EXPECT_TRUE(c.noise_test);
  EXPECT_DOUBLE_EQ(c.base.mean, 100);
  EXPECT_DOUBLE_EQ(c.base.stddev, 2);
  EXPECT_NEAR(*c.t_statistic, 7.746, 1e-3);
  EXPECT_NEAR(c.df, 2.941, 1e-3);
  EXPECT_DOUBLE_EQ(c.t_critical, 4.303);
  EXPECT_TRUE(c.significant);
  // The same difference with wide spreads is noise.
  const Comparison wide = Compare("end_to_end", "ns", {100, 120, 80}, {90, 110, 70}, DiffOptions());
  EXPECT_FALSE(wide.significant);
  // Identical runs on each side: any difference counts, none does not.
  EXPECT_TRUE(Compare("x", "ns", {5, 5}, {6, 6}, DiffOptions()).significant);
  EXPECT_FALSE(Compare("x", "ns", {5, 5}, {5, 5}, DiffOptions()).significant);
}

TEST(DiffStatisticsTest, CriticalValues) {
  EXPECT_DOUBLE_EQ(TCritical95(0.5), 12.706);
  EXPECT_DOUBLE_EQ(TCritical95(1), 12.706);
  EXPECT_DOUBLE_EQ(TCritical95(4.9), 2.776);  // rounded down: errs towards "within noise"
  EXPECT_DOUBLE_EQ(TCritical95(30), 2.042);
  EXPECT_DOUBLE_EQ(TCritical95(1000), 1.980);
  EXPECT_DOUBLE_EQ(TCritical95(std::numeric_limits<double>::infinity()), 1.960);
}

TEST(DiffTest, FindingsMatchedByRuleAcrossRuns) {
  const FindingFigure idle{"gpu.idle", analysis::Severity::kError, "idle", 10};
  const FindingFigure sync{"sync.points", analysis::Severity::kWarning, "sync", 5};
  const FindingFigure copies{"copies.pageable", analysis::Severity::kWarning, "pageable", 5};
  const DiffResult d = DiffRuns({Figures(100, 0.5, {idle, sync}), Figures(100, 0.5, {idle})},
                                {Figures(50, 0.9, {sync, copies}), Figures(52, 0.9, {copies})});
  ASSERT_EQ(d.resolved.size(), 1u);
  EXPECT_EQ(d.resolved[0].rule_id, "gpu.idle");
  EXPECT_EQ(d.resolved[0].base_runs, 2u);
  ASSERT_EQ(d.appeared.size(), 1u);
  EXPECT_EQ(d.appeared[0].rule_id, "copies.pageable");
  EXPECT_EQ(*d.appeared[0].new_severity, analysis::Severity::kWarning);
  ASSERT_EQ(d.persisting.size(), 1u);
  EXPECT_EQ(d.persisting[0].rule_id, "sync.points");
  EXPECT_EQ(d.persisting[0].base_runs, 1u);
  EXPECT_EQ(d.persisting[0].new_runs, 1u);
}

TEST(DiffTest, EmptyRunIsNotComparable) {
  const DiffResult d = DiffRuns({Figures(0)}, {Figures(10)});
  EXPECT_EQ(d.verdict, Verdict::kNotComparable);
  EXPECT_TRUE(absl::StrContains(d.conclusion, "BASE has no recorded GPU activity")) << d.conclusion;
  DiffOptions all;
  all.span = DiffSpan::kAll;
  EXPECT_TRUE(absl::StrContains(DiffRuns({Figures(0)}, {Figures(10)}, all).conclusion, "BASE has no recorded activity"));
}

// The same GPU work after a start-up twice as long (a slower import, a colder disk): end to end
// says 1.5x slower, steady state says nothing changed, as it should.
TEST(DiffTest, StartUpTimeIsLeftOutByDefault) {
  SyntheticTrace quick, slow;
  for (SyntheticTrace* t : {&quick, &slow}) {
    const double startup_us = t == &quick ? 1000 : 3000;
    t->Kernel("init", startup_us, 10);  // the program's first GPU operation, once set up
    for (int i = 0; i < 200; ++i) t->Kernel("step", startup_us + 100 + 20.0 * i, 15);
  }
  // Host activity from time 0: the start-up.
  quick.Launch("init", 0, 5, 1000, 10);
  slow.Launch("init", 0, 5, 3000, 10);
  const RunFigures a = Load(quick.Write()), b = Load(slow.Write());
  const DiffResult steady = DiffRuns({a}, {b});
  EXPECT_EQ(steady.verdict, Verdict::kNoChange) << steady.conclusion;
  EXPECT_DOUBLE_EQ(steady.end_to_end.base.mean, steady.end_to_end.next.mean);
  DiffOptions all;
  all.span = DiffSpan::kAll;
  const DiffResult whole = DiffRuns({a}, {b}, all);
  EXPECT_EQ(whole.verdict, Verdict::kWorse) << whole.conclusion;
  EXPECT_TRUE(absl::StrContains(whole.conclusion, "slower end to end")) << whole.conclusion;
}

// A one-off set-up (a graph's instantiation, a model load) before a busy loop: compared in steady
// state, the GPU busy share is the loop's, not the whole run's (a CUDA-graph twin once read
// "GPU busy 15.6% -> 6.2%" beside a 4x faster steady state).
TEST(DiffTest, TheBusyShareIsOfTheSpanCompared) {
  SyntheticTrace t;
  t.Kernel("init", 0, 10);
  for (int i = 0; i < 300; ++i) t.Kernel("step", 5000 + 20.0 * i, 15);  // 5 ms idle set-up first
  const RunFigures f = Load(t.Write());
  // Start-up: the first 1% of the operations (3 of 301: init and two steps), so the steady state
  // starts at the third step.
  EXPECT_NEAR(f.steady_gpu_busy_share, (298 * 15.0) / (297 * 20.0 + 15), 1e-9);
  EXPECT_NEAR(f.gpu_busy_share, (10 + 300 * 15.0) / (5000 + 299 * 20.0 + 15), 1e-5);
  const DiffResult steady = DiffRuns({f}, {f});
  EXPECT_DOUBLE_EQ(steady.gpu_busy.base.mean, f.steady_gpu_busy_share);
  EXPECT_NEAR(steady.base_gpu_active.mean, 297 * 20'000.0 + 15'000, 100) << "the steady state's active span";
  EXPECT_TRUE(absl::StrContains(steady.conclusion, "GPU busy 75.1% -> 75.1%")) << steady.conclusion;
  DiffOptions all;
  all.span = DiffSpan::kAll;
  EXPECT_DOUBLE_EQ(DiffRuns({f}, {f}, all).gpu_busy.base.mean, f.gpu_busy_share);
  EXPECT_DOUBLE_EQ(DiffRuns({f}, {f}, all).base_gpu_active.mean, static_cast<double>(f.gpu_active_ns));
}

// A chosen NVTX range: its mean length per instance, whatever the number of instances.
TEST(DiffTest, AnNvtxRangesMeanLengthIsCompared) {
  SyntheticTrace base, next;
  for (int i = 0; i < 4; ++i) base.NvtxRange("step", 1000.0 * i, 1000.0 * i + 800);
  for (int i = 0; i < 8; ++i) next.NvtxRange("step", 1000.0 * i, 1000.0 * i + 400);
  base.Kernel("k", 0, 10);
  next.Kernel("k", 0, 10);
  DiffOptions options;
  options.span = DiffSpan::kNvtx;
  options.nvtx_range = "step";
  const DiffResult d = DiffRuns({Load(base.Write())}, {Load(next.Write())}, options);
  EXPECT_EQ(d.verdict, Verdict::kHelped) << d.conclusion;
  EXPECT_DOUBLE_EQ(d.end_to_end.base.mean, 800'000);
  EXPECT_DOUBLE_EQ(d.end_to_end.next.mean, 400'000);
  EXPECT_TRUE(absl::StrContains(d.conclusion, "NEW is 2.00x faster per NVTX range \"step\"")) << d.conclusion;
  options.nvtx_range = "request";
  const DiffResult none = DiffRuns({Load(base.Write())}, {Load(next.Write())}, options);
  EXPECT_EQ(none.verdict, Verdict::kNotComparable);
  EXPECT_TRUE(absl::StrContains(none.conclusion, "BASE has no NVTX range \"request\"")) << none.conclusion;
  // It names the ranges that side has, so that the right name is one look away.
  EXPECT_TRUE(absl::StrContains(none.conclusion, "its ranges: \"step\" (4x)")) << none.conclusion;
}

TEST(DiffRenderTest, TextAndJson) {
  const DiffResult d = DiffRuns({Load(LaunchBoundRun())}, {Load(FusedRun())});
  const std::string text = RenderDiffText(d);
  EXPECT_TRUE(absl::StartsWith(text, "cuscope diff\n  BASE: ")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Verdict: NEW is 4.94x faster")) << text;
  EXPECT_TRUE(
      absl::StrContains(text, "Findings resolved (raised for BASE, not for NEW):\n  launch.overhead [error -> -]: "))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "\n  gpu.idle [error -> -]: GPU 0 idle 80.0%")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Findings new (raised for NEW, not for BASE): none\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "  step\n")) << text;  // kernel names short by default
  EXPECT_FALSE(absl::StrContains(text, "step(float*, int)")) << text;
  const std::string demangled = RenderDiffText(d, 10, core::KernelNameStyle::kDemangled);
  EXPECT_TRUE(absl::StrContains(demangled, "  step(float*, int)\n")) << demangled;
  EXPECT_TRUE(absl::StrContains(RenderDiffText(d, 10, core::KernelNameStyle::kMangled), "  _Z4stepPfi\n"));
  EXPECT_TRUE(absl::StrContains(text, "-100.0%")) << text;

  google::protobuf::Struct json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(RenderDiffJson(d), &json).ok());
  const auto& f = json.fields();
  EXPECT_EQ(f.at("verdict").string_value(), "helped");
  EXPECT_EQ(f.at("span").string_value(), "in steady state");
  EXPECT_DOUBLE_EQ(
      f.at("steady_state").struct_value().fields().at("base").struct_value().fields().at("mean").number_value(),
      7'904'000);
  EXPECT_DOUBLE_EQ(f.at("steady_state").struct_value().fields().at("change").number_value(), 1'600'000.0 - 7'904'000.0);
  EXPECT_TRUE(absl::StrContains(text, "Compared: steady state, from the end of start-up")) << text;
  EXPECT_EQ(f.at("kernels").list_value().values_size(), 2);
  EXPECT_EQ(f.at("findings_resolved").list_value().values(0).struct_value().fields().at("rule_id").string_value(),
            d.resolved[0].rule_id);
}

}  // namespace
}  // namespace cuscope::report
