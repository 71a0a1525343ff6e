// The baseline at the top of every report, and the capture windows it (and gpu.idle) are taken over,
// on synthetic timelines whose numbers are known.
#include "lib/analysis/baseline.h"

#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/rules/rules.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::Us;

Baseline BaselineOf(SyntheticTrace& s) {
  const core::Trace trace = s.Load();
  return ComputeBaseline(Timeline::Build(trace));
}

// A 1 ms window holding three kernels on two streams (two of them overlapping) and a copy.
void KnownRun(SyntheticTrace& s) {
  s.TimelineWindow(0, 1000);
  s.Kernel("a", 100, 100, /*stream=*/7);
  s.Kernel("b", 150, 100, /*stream=*/8);  // overlaps a for 50 us
  s.Kernel("c", 500, 100, /*stream=*/7);
  s.Memcpy(v1::COPY_KIND_HTOD, 300, 100, 1 << 20, true);  // busy for the timeline, not for the SMs
}

TEST(BaselineTest, KnownRunGivesKnownNumbers) {
  SyntheticTrace s;
  KnownRun(s);
  const Baseline b = BaselineOf(s);
  EXPECT_TRUE(b.windows_recorded);
  EXPECT_EQ(b.wall_ns, 1'000'000u);
  EXPECT_EQ(b.metrics_ns, 0u);
  EXPECT_EQ(b.kernel_ns, 300'000u);  // each kernel counts, overlap or not
  EXPECT_EQ(b.busy_ns, 250'000u);    // the union: 100..250 and 500..600
  EXPECT_DOUBLE_EQ(b.utilization, 0.25);
  EXPECT_EQ(b.kernels, 3u);
  EXPECT_DOUBLE_EQ(b.launches_per_second, 3000.0);
  ASSERT_EQ(b.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(b.devices[0].utilization, 0.25);
  EXPECT_EQ(RenderBaselineText(b),
            "Baseline: 1.000 ms timeline window, 300.0 us kernel time, GPU utilization 25.0% of the window, 3 kernels, 3000 "
            "launches/s\n");
}

TEST(BaselineTest, IsTheFirstThingAfterTheTitleInTextAndATableInJson) {
  SyntheticTrace s;
  KnownRun(s);
  const core::Trace trace = s.Load();
  const Analysis a = Analyze(trace, AnalyzeOptions{});
  const std::string text = RenderAnalysisText(a, "run.cuscope", 10);
  const size_t second_line = text.find('\n') + 1;
  EXPECT_EQ(text.compare(second_line, 10, "Baseline: "), 0) << text;
  // The JSON still parses as report.proto's Report; the baseline is its table "baseline".
  v1::Report report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(RenderAnalysisJson(a, "run.cuscope"), &report).ok());
  const v1::Table* table = nullptr;
  for (const v1::Table& t : report.tables()) {
    if (t.name() == "baseline") table = &t;
  }
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows_size(), 2);  // the run, then GPU 0
  // Numeric columns' cells are numbers, text is text.
  const auto& all = table->rows(0).cells();
  ASSERT_EQ(all.size(), 8);
  EXPECT_EQ(all[0].string_value(), "all");
  const std::vector<double> numbers = {1000000, 0, 300000, 250000, 25.0, 3, 3000.0};
  for (size_t i = 0; i < numbers.size(); ++i) {
    EXPECT_EQ(all[i + 1].kind_case(), google::protobuf::Value::kNumberValue) << i;
    EXPECT_EQ(all[i + 1].number_value(), numbers[i]) << i;
  }
  EXPECT_EQ(table->rows(1).cells(0).string_value(), "GPU 0");
}

TEST(BaselineTest, WithoutCaptureWindowsTheWindowIsFirstToLastActivity) {
  SyntheticTrace s;
  s.Kernel("a", 100, 100);
  s.Kernel("b", 400, 100);
  const Baseline b = BaselineOf(s);
  EXPECT_FALSE(b.windows_recorded);
  EXPECT_EQ(b.wall_ns, 400'000u);
  EXPECT_DOUBLE_EQ(b.utilization, 0.5);
  EXPECT_NE(RenderBaselineText(b).find("(no capture window in the trace: first to last activity)"), std::string::npos);
}

TEST(BaselineTest, EachDeviceHasItsUtilizationAndTheRunTheirMean) {
  SyntheticTrace s;
  s.TimelineWindow(0, 1000);
  s.Kernel("big", 0, 500, 7, 0, 0, 0, /*device=*/0);
  s.Kernel("small", 0, 100, 7, 0, 0, 0, /*device=*/1);
  const Baseline b = BaselineOf(s);
  ASSERT_EQ(b.devices.size(), 2u);
  EXPECT_DOUBLE_EQ(b.devices[0].utilization, 0.5);
  EXPECT_DOUBLE_EQ(b.devices[1].utilization, 0.1);
  EXPECT_DOUBLE_EQ(b.utilization, 0.3);
  const std::string text = RenderBaselineText(b);
  EXPECT_NE(text.find("\n  GPU 0: utilization 50.0%, 500.0 us kernel time, 1 kernel\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  GPU 1: utilization 10.0%, 100.0 us kernel time, 1 kernel\n"), std::string::npos) << text;
}

TEST(BaselineTest, MetricCollectionInsideTheWindowIsLeftOut) {
  SyntheticTrace s;
  s.TimelineWindow(0, 1000);
  s.Kernel("k", 0, 200);
  s.Metrics(/*correlation=*/0, "k", 0, /*window_start_us=*/400, /*window_us=*/200, {});
  const Baseline b = BaselineOf(s);
  EXPECT_EQ(b.wall_ns, 1'000'000u);
  EXPECT_EQ(b.metrics_ns, 200'000u);
  EXPECT_EQ(b.counted_ns, 800'000u);
  EXPECT_DOUBLE_EQ(b.utilization, 0.25);
  EXPECT_NE(RenderBaselineText(b).find("(200.0 us of metric collection left out)"), std::string::npos);
}

TEST(BaselineTest, KernelsWhileTheTimelineWasOffAreNotCounted) {
  SyntheticTrace s;
  s.TimelineWindowOpens(0);
  s.Kernel("in", 50, 30);
  s.TimelineWindowCloses(100, "cudaProfilerStop");
  s.Kernel("after", 200, 50);  // recorded, but outside the window
  const Baseline b = BaselineOf(s);
  EXPECT_EQ(b.wall_ns, 100'000u);
  EXPECT_EQ(b.kernels, 1u);
  EXPECT_EQ(b.kernel_ns, 30'000u);
  EXPECT_EQ(b.busy_ns, 30'000u);
}

// A host far ahead of the GPU: 100 launches inside a 1 ms window, each kernel 50 us, so the queue
// drains for 4 ms after the window closed. The baseline and the "GPU 0" line give the same kernels
// and kernel time for the window, and the line says what ran outside it.
TEST(BaselineTest, ADeepLaunchQueueGivesOneSetOfNumbersForTheWindow) {
  SyntheticTrace s;
  s.TimelineWindowOpens(0);
  for (int i = 0; i < 100; ++i) s.Launch("k", i * 9.0, 8, 10 + i * 50.0, 50);
  s.TimelineWindowCloses(1000, "duration");
  const core::Trace trace = s.Load();
  const Analysis a = Analyze(trace, AnalyzeOptions{});
  // In the window: the kernels starting by 1 ms (10 .. 960 us: 20), the one cut at 1 ms counted
  // for its 40 us inside.
  EXPECT_EQ(a.baseline.kernels, 20u);
  EXPECT_EQ(a.baseline.kernel_ns, 990'000u);
  ASSERT_EQ(a.baseline.devices.size(), 1u);
  EXPECT_EQ(a.baseline.devices[0].kernels_outside, 80u);
  EXPECT_EQ(a.baseline.devices[0].kernel_ns_outside, 5'000'000u - 990'000u);
  const std::string text = RenderAnalysisText(a, "run.cuscope", 10);
  EXPECT_NE(text.find("990.0 us kernel time, GPU utilization 99.0% of the window, 20 kernels"), std::string::npos) << text;
  EXPECT_NE(text.find("(20 kernels, 990.0 us kernel time in the window; outside it 80 more kernels and 4.010 ms of "
                      "kernel time)"),
            std::string::npos)
      << text;
}

TEST(BaselineTest, WithEverythingInTheWindowTheGpuLineMatchesTheBaselineAlone) {
  SyntheticTrace s;
  KnownRun(s);
  const core::Trace trace = s.Load();
  const std::string text = RenderAnalysisText(Analyze(trace, AnalyzeOptions{}), "run.cuscope", 10);
  EXPECT_NE(text.find("(3 kernels, 300.0 us kernel time)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("outside it"), std::string::npos) << text;
}

// ---- Capture windows -----------------------------------------------------------------------

v1::CaptureWindow Window(uint64_t start, uint64_t end) {
  v1::CaptureWindow w;
  w.set_kind(v1::WINDOW_KIND_TIMELINE);
  w.set_start_ns(start);
  w.set_end_ns(end);
  return w;
}

TEST(CaptureWindowSetTest, HalvesPairUpAndMissingHalvesRunToTheSpan) {
  const Interval span{100, 10'000};
  // Open at 200, closed at 300; whole 500..600; opened at 800 and never closed.
  EXPECT_EQ(CaptureWindowSet({Window(200, 0), Window(0, 300), Window(500, 600), Window(800, 0)},
                             v1::WINDOW_KIND_TIMELINE, span),
            (IntervalSet{{200, 300}, {500, 600}, {800, 10'000}}));
  // Closed at 400 without an opening half: open since before the first record.
  EXPECT_EQ(CaptureWindowSet({Window(0, 400)}, v1::WINDOW_KIND_TIMELINE, span), (IntervalSet{{100, 400}}));
  // Other kinds are not timeline windows.
  v1::CaptureWindow metrics = Window(200, 300);
  metrics.set_kind(v1::WINDOW_KIND_METRICS);
  EXPECT_TRUE(CaptureWindowSet({metrics}, v1::WINDOW_KIND_TIMELINE, span).empty());
}

TEST(CaptureWindowSetTest, TheTimeBetweenTwoWindowsIsNeitherBusyNorIdle) {
  // Two cudaProfilerStart/Stop ranges, 800 us apart: the timeline was off in between.
  SyntheticTrace s;
  s.TimelineWindowOpens(0, "cudaProfilerStart");
  s.Kernel("k", 0, 50);
  s.TimelineWindowCloses(100, "cudaProfilerStop");
  s.TimelineWindowOpens(900, "cudaProfilerStart");
  s.Kernel("k", 900, 50);
  s.TimelineWindowCloses(1000, "cudaProfilerStop");
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  ASSERT_EQ(t.devices().size(), 1u);
  const DeviceTimeline& d = t.devices()[0];
  EXPECT_EQ(d.unobserved_idle_ns(), 800'000u);
  EXPECT_EQ(d.counted_active_ns(), 150'000u);  // 0..100 and 900..950
  EXPECT_TRUE(t.Captured(Us(50)));
  EXPECT_FALSE(t.Captured(Us(500)));
  Thresholds th;
  th.min_recoverable_ms = 0;
  const std::vector<Finding> idle = GpuIdleRule(t, th);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_DOUBLE_EQ(*idle[0].number("idle_ns"), 50'000);  // 50..100 only
  EXPECT_DOUBLE_EQ(*idle[0].number("unobserved_ns"), 800'000);
  EXPECT_NE(idle[0].headline.find("(800.0 us outside the capture windows left out)"), std::string::npos)
      << idle[0].headline;
  const Baseline b = ComputeBaseline(t);
  EXPECT_EQ(b.window_count, 2u);
  EXPECT_EQ(b.wall_ns, 200'000u);
  EXPECT_DOUBLE_EQ(b.utilization, 0.5);
}

TEST(CaptureWindowSetTest, ASessionWindowAroundEverythingChangesNothing) {
  // The H200 traces' shape: one window from session start to exit around every record.
  auto idle_of = [](bool with_window) {
    SyntheticTrace s;
    if (with_window) s.TimelineWindowOpens(-500);
    for (int i = 0; i < 20; ++i) s.Launch("step", i * 100.0 - 3, 2, i * 100.0, 10);
    if (with_window) s.TimelineWindowCloses(3000);
    const core::Trace trace = s.Load();
    const std::vector<Finding> f = GpuIdleRule(Timeline::Build(trace), Thresholds());
    EXPECT_EQ(f.size(), 1u);
    return f.empty() ? std::string() : f[0].headline;
  };
  EXPECT_EQ(idle_of(true), idle_of(false));
}

}  // namespace
}  // namespace cuscope::analysis
