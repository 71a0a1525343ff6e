// GPU counters sampled over time: series, time weighting, the gpu_metrics table and the
// utilization-over-time intervals set against the timeline.
#include "lib/analysis/gpu_counters.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/core/counter_names.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using Sample = SyntheticTrace::Sample;

constexpr v1::CounterSource kPm = v1::COUNTER_SOURCE_PM_SAMPLING;
const std::string kSmActive(pm_counter::kSmActivePct);

const CounterStats* StatsOf(const std::vector<CounterStats>& stats, const std::string& name, uint32_t device = 0) {
  for (const CounterStats& s : stats) {
    if (s.name == name && s.device == device) return &s;
  }
  return nullptr;
}

TEST(GpuCountersTest, PmAverageIsTimeWeightedNvmlAverageIsTheMeanOfReadings) {
  SyntheticTrace s;
  // 10 us at 10% then 30 us at 50%: time-weighted 40%, where the plain mean would be 30%.
  s.Counter(kSmActive, kPm, {{0, 10, 10}, {10, 30, 50}});
  s.NvmlReadings(core::counter::kPowerWatts, 0, 100, {100, 200, 300});
  const core::Trace trace = s.Load();
  const std::vector<CounterStats> stats = SummarizeCounters(trace, GroupCounterSeries(trace));
  const CounterStats* sm = StatsOf(stats, kSmActive);
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->samples, 2u);
  EXPECT_DOUBLE_EQ(sm->min, 10);
  EXPECT_DOUBLE_EQ(*sm->avg, 40);
  EXPECT_DOUBLE_EQ(sm->max, 50);
  EXPECT_EQ(sm->unit, "%");
  const CounterStats* power = StatsOf(stats, core::counter::kPowerWatts);
  ASSERT_NE(power, nullptr);
  EXPECT_EQ(power->samples, 3u);
  EXPECT_DOUBLE_EQ(*power->avg, 200);
  EXPECT_EQ(power->unit, "W");
}

TEST(GpuCountersTest, GpuMetricsTableRowsPerDeviceAndCounter) {
  SyntheticTrace s;
  s.Counter(kSmActive, kPm, {{0, 10, 10}, {10, 30, 50}}, /*device=*/1);
  s.NvmlReadings(core::counter::kSmClockMhz, 0, 100, {1980, 1410}, /*device=*/0);
  s.NvmlReadings(core::counter::kClocksEventReasons, 0, 100, {0, 4}, /*device=*/0);
  const core::Trace trace = s.Load();
  const Table t = GpuMetricsSummary(Timeline::Build(trace));
  EXPECT_EQ(t.name, "gpu_metrics");
  ASSERT_EQ(t.rows.size(), 3u);
  // Device 0's NVML readings (by name), then device 1's PM samples. A bit mask has no average.
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"0", "2", "0.00", "", "4.00", "mask", "nvml",
                                                 "nvml.clocks_event_reasons"}));
  EXPECT_EQ(t.rows[1],
            (std::vector<std::string>{"0", "2", "1410.00", "1695.00", "1980.00", "MHz", "nvml", "nvml.sm_clock_mhz"}));
  EXPECT_EQ(t.rows[2], (std::vector<std::string>{"1", "2", "10.00", "40.00", "50.00", "%", "pm", kSmActive}));
  EXPECT_EQ(RenderCsv(t).substr(0, RenderCsv(t).find('\n')), "Device,Samples,Min,Avg,Max,Unit,Source,Name");
}

TEST(GpuCountersTest, AnNvmlReadingHoldsUntilTheNextTheLastForOnePeriod) {
  SyntheticTrace s;
  s.NvmlReadings(core::counter::kPowerWatts, 0, 100, {100, 200, 300});
  s.Counter(kSmActive, kPm, {{0, 10, 10}});
  const core::Trace trace = s.Load();
  const std::vector<CounterSeries> series = GroupCounterSeries(trace);
  ASSERT_EQ(series.size(), 2u);
  const CounterSeries& pm = series[0];  // PM sampling first
  const CounterSeries& nvml = series[1];
  EXPECT_FALSE(pm.instantaneous);
  ASSERT_TRUE(nvml.instantaneous);
  EXPECT_EQ(HeldSpan(trace, nvml, 0).length(), 100'000u);
  EXPECT_EQ(HeldSpan(trace, nvml, 2).length(), 100'000u);  // the median spacing
  EXPECT_EQ(HeldSpan(trace, pm, 0).length(), 10'000u);
  // 50 us of the first reading and 50 us of the second: 150 W.
  const uint64_t t0 = cuscope::testing::Us(0);
  EXPECT_DOUBLE_EQ(*AverageOver(trace, nvml, {{t0 + 50'000, t0 + 150'000}}), 150);
  EXPECT_FALSE(AverageOver(trace, nvml, {{t0 + 400'000, t0 + 500'000}}).has_value());
}

// A 1 ms window in 10 intervals of 100 us. The timeline: a kernel filling interval 0, one filling
// half of interval 1. The SMs (sampled every 100 us): 90% in interval 0, 45% in 1, 80% in interval 5
// where the timeline shows nothing, 0 elsewhere.
void TwoPictures(SyntheticTrace& s) {
  s.TimelineWindow(0, 1000);
  s.Kernel("full", 0, 100);
  s.Kernel("half", 100, 50);
  std::vector<Sample> sm;
  for (int i = 0; i < 10; ++i) sm.push_back({i * 100.0, 100, i == 0 ? 90.0 : i == 1 ? 45.0 : i == 5 ? 80.0 : 0.0});
  s.Counter(kSmActive, kPm, sm);
  s.NvmlReadings(core::counter::kSmClockMhz, 0, 500, {1980, 1500});
}

TEST(GpuCountersTest, UtilizationOverTimeSetsTheTimelineBesideTheSamples) {
  SyntheticTrace s;
  TwoPictures(s);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const GpuCountersReport r = AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), Thresholds());
  EXPECT_EQ(r.samples, 12u);
  EXPECT_EQ(r.counters, 2u);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceUtilization& d = r.devices[0];
  EXPECT_EQ(d.columns, (std::vector<std::string>{"SM active (%)", "SM clock (MHz)"}));
  ASSERT_EQ(d.intervals.size(), 10u);
  EXPECT_EQ(d.intervals[0].span.length(), 100'000u);
  EXPECT_DOUBLE_EQ(*d.intervals[0].kernel_busy_pct, 100);
  EXPECT_DOUBLE_EQ(*d.intervals[0].values[0], 90);
  EXPECT_DOUBLE_EQ(*d.intervals[1].kernel_busy_pct, 50);
  EXPECT_DOUBLE_EQ(*d.intervals[1].values[0], 45);
  EXPECT_DOUBLE_EQ(*d.intervals[5].kernel_busy_pct, 0);
  EXPECT_DOUBLE_EQ(*d.intervals[5].values[0], 80);
  EXPECT_DOUBLE_EQ(*d.intervals[4].values[1], 1980);
  EXPECT_DOUBLE_EQ(*d.intervals[5].values[1], 1500);
  // Only interval 5 is 25 points or more apart: the SMs worked where the trace shows no kernel.
  for (size_t i = 0; i < d.intervals.size(); ++i) EXPECT_EQ(d.intervals[i].disagree, i == 5) << i;
  EXPECT_EQ(d.disagreeing, 1u);
  EXPECT_EQ(d.busy_without_sm, 0u);

  const std::string text = RenderGpuCountersText(r);
  EXPECT_NE(text.find("GPU counters: 12 samples of 2 counters on 1 GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 0 over the timeline window, 10 intervals of 100.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("SMs busier than the timeline (80 points)"), std::string::npos) << text;
  EXPECT_NE(text.find("In 1 of 10 intervals the timeline's kernel busy time and the sampled SM activity differ"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("another process, or dropped records"), std::string::npos) << text;
  EXPECT_FALSE(d.intervals[5].window_opens);
  EXPECT_EQ(d.busier_at_window_start, 0u);
  EXPECT_EQ(text.find("the window opened here"), std::string::npos) << text;
}

TEST(GpuCountersTest, TheDisagreementThresholdIsAThreshold) {
  SyntheticTrace s;
  TwoPictures(s);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  Thresholds t;
  t.counter_disagree_points = 80;  // interval 5 differs by exactly 80: flagged
  EXPECT_EQ(AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), t).devices[0].disagreeing, 1u);
  t.counter_disagree_points = 80.5;
  EXPECT_EQ(AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), t).devices[0].disagreeing, 0u);
  t.gpu_counter_intervals = 4;
  EXPECT_EQ(AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), t).devices[0].intervals.size(), 4u);
}

TEST(GpuCountersTest, BusyKernelsOnIdleSmsAreExplained) {
  SyntheticTrace s;
  s.TimelineWindow(0, 1000);
  s.Kernel("one_block", 0, 1000);  // busy all along ...
  s.Counter(kSmActive, kPm, {{0, 1000, 1}});  // ... on 1% of the SMs
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const GpuCountersReport r = AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), Thresholds());
  EXPECT_EQ(r.devices[0].busy_without_sm, 10u);
  const std::string text = RenderGpuCountersText(r);
  EXPECT_NE(text.find("busy, SMs idle (99 points)"), std::string::npos) << text;
  EXPECT_NE(text.find("the kernels occupy few SMs"), std::string::npos) << text;
}

TEST(GpuCountersTest, DramFromBytesPerSecondAgainstThePeak) {
  SyntheticTrace s;
  s.AddDevice(cuscope::testing::H200Device());  // 4.8 TB/s
  s.TimelineWindow(0, 1000);
  s.Kernel("copy", 0, 1000);
  s.Counter(std::string(pm_counter::kDramReadBytesPerSecond), kPm, {{0, 1000, 1.2e12}});
  s.Counter(std::string(pm_counter::kDramWriteBytesPerSecond), kPm, {{0, 1000, 1.2e12}});
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const GpuCountersReport r = AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), Thresholds());
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].columns, (std::vector<std::string>{"DRAM (%, from bytes/s)"}));
  EXPECT_DOUBLE_EQ(*r.devices[0].intervals[3].values[0], 50);
  // Without an SM activity counter there is nothing to check the timeline against, and it says so.
  EXPECT_NE(RenderGpuCountersText(r).find("no SM activity counter was sampled"), std::string::npos);
}

// A window opened while kernels launched before it still ran: the SMs are busy in its first
// interval and the timeline is not. Said as such, not as another process.
TEST(GpuCountersTest, KernelsInFlightWhenTheWindowOpensAreExplained) {
  SyntheticTrace s;
  s.TimelineWindow(0, 1000, "delay");
  s.Kernel("gemm", 100, 900);                  // the first one on the timeline
  s.Counter(kSmActive, kPm, {{0, 1000, 90}});  // the SMs busy from the start
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const GpuCountersReport r = AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), Thresholds());
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceUtilization& d = r.devices[0];
  ASSERT_EQ(d.intervals.size(), 10u);
  EXPECT_TRUE(d.intervals[0].window_opens);
  EXPECT_TRUE(d.intervals[0].disagree);
  EXPECT_FALSE(d.intervals[1].window_opens);
  EXPECT_EQ(d.disagreeing, 1u);
  EXPECT_EQ(d.busier_at_window_start, 1u);
  const std::string text = RenderGpuCountersText(r);
  EXPECT_NE(text.find("SMs busier than the timeline (90 points); the window opened here"), std::string::npos) << text;
  EXPECT_NE(text.find("kernels launched before it were still running"), std::string::npos) << text;
  EXPECT_EQ(text.find("another process"), std::string::npos) << text;
}

// The counters the sampler records by default (lib/core/counter_names.h) fill the table: SM issue,
// tensor pipes, and DRAM as read plus write bandwidth.
TEST(GpuCountersTest, TheSamplersDefaultCountersGetColumns) {
  SyntheticTrace s;
  s.TimelineWindow(0, 1000);
  s.Kernel("gemm", 0, 1000);
  s.Counter(kSmActive, kPm, {{0, 1000, 99}});
  s.Counter(core::counter::kPmSmIssuePct, kPm, {{0, 1000, 40}});
  s.Counter(core::counter::kPmTensorActivePct, kPm, {{0, 1000, 55}});
  s.Counter(core::counter::kPmDramReadPct, kPm, {{0, 1000, 12}});
  s.Counter(core::counter::kPmDramWritePct, kPm, {{0, 1000, 8}});
  s.Counter(core::counter::kPmPcieReadBytesPerSecond, kPm, {{0, 1000, 1e6}});  // in the stats, not the table
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const GpuCountersReport r = AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), Thresholds());
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceUtilization& d = r.devices[0];
  EXPECT_EQ(d.columns, (std::vector<std::string>{"SM active (%)", "SM issue (%)", "tensor active (%)",
                                                 "DRAM read+write (%)"}));
  ASSERT_GT(d.intervals.size(), 2u);
  ASSERT_EQ(d.intervals[2].values.size(), 4u);
  for (const auto& v : d.intervals[2].values) ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(*d.intervals[2].values[1], 40);
  EXPECT_DOUBLE_EQ(*d.intervals[2].values[2], 55);
  EXPECT_DOUBLE_EQ(*d.intervals[2].values[3], 20);
  EXPECT_EQ(d.disagreeing, 0u);
}

TEST(GpuCountersTest, NoSamplesNoSection) {
  SyntheticTrace s;
  s.Kernel("k", 0, 10);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const GpuCountersReport r = AnalyzeGpuCounters(timeline, ComputeBaseline(timeline), Thresholds());
  EXPECT_EQ(r.samples, 0u);
  EXPECT_EQ(RenderGpuCountersText(r), "");
  EXPECT_TRUE(GpuMetricsSummary(timeline).rows.empty());
}

}  // namespace
}  // namespace cuscope::analysis
