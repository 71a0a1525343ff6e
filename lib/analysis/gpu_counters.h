// GPU counters sampled over time (Trace::counter_samples): PM sampling metrics (a value over each
// sample's [start, end]) and NVML readings (a value at one instant), grouped into series, summarized
// per counter (`cuscope stats --report gpu_metrics`) and set beside the timeline's kernel busy time
// over the window (the "GPU counters" section of `cuscope analyze`).
//
// Time weighting: a PM sample weighs by the time it covers. An NVML reading holds until the next
// reading of the same series; the last one holds for the series' median spacing (one period), so a
// run's last reading neither vanishes nor stretches to the end of the trace. A PM series whose
// samples all have no duration is read like NVML.
//
// Counters are shown by name whatever they are; a few are known and get a column of their own in
// the utilization-over-time table (kUtilizationColumns).
#ifndef CUSCOPE_LIB_ANALYSIS_GPU_COUNTERS_H_
#define CUSCOPE_LIB_ANALYSIS_GPU_COUNTERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/analysis/baseline.h"
#include "lib/analysis/interval_names.h"
#include "lib/analysis/table.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"
#include "lib/core/counter_names.h"
#include "lib/core/trace.h"

namespace cuscope::analysis {

// PM sampling counters the analyzer knows by name: the sampler's defaults (lib/core/counter_names.h)
// and, for traces that hold them, other names of the same quantities.
namespace pm_counter {
inline constexpr std::string_view kSmActivePct = core::counter::kPmSmActivePct;
inline constexpr std::string_view kSmIssuePct = core::counter::kPmSmIssuePct;
inline constexpr std::string_view kTensorActivePct = core::counter::kPmTensorActivePct;
inline constexpr std::string_view kDramReadPct = core::counter::kPmDramReadPct;
inline constexpr std::string_view kDramWritePct = core::counter::kPmDramWritePct;
inline constexpr std::string_view kSmThroughputPct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kDramThroughputPct = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kGpuDramThroughputPct = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kDramReadBytesPerSecond = "dram__bytes_read.sum.per_second";
inline constexpr std::string_view kDramWriteBytesPerSecond = "dram__bytes_write.sum.per_second";
}  // namespace pm_counter

// One counter on one device: indices into trace.counter_samples, by start time.
struct CounterSeries {
  uint32_t device = 0;
  v1::CounterSource source = v1::COUNTER_SOURCE_UNKNOWN;
  uint32_t name_id = 0;
  std::string name;
  std::vector<uint32_t> samples;
  bool instantaneous = false;  // NVML, or PM samples without duration: each value holds until the next
  uint64_t last_hold_ns = 0;   // how long the last instantaneous reading holds
};

// Every series of the trace, by device, then source (PM sampling first), then name.
std::vector<CounterSeries> GroupCounterSeries(const core::Trace& trace);

// The span over which sample `i` of the series (an index into series.samples) stands: its own for a
// PM sample, up to the next reading for an instantaneous one.
Interval HeldSpan(const core::Trace& trace, const CounterSeries& series, size_t i);

// The time-weighted mean of the series over `over`; nullopt when no sample covers any of it.
std::optional<double> AverageOver(const core::Trace& trace, const CounterSeries& series, const IntervalSet& over);

struct CounterStats {
  uint32_t device = 0;
  v1::CounterSource source = v1::COUNTER_SOURCE_UNKNOWN;
  std::string name;
  std::string unit;  // "%", "W", "C", "MHz", "bytes", "bytes/s", "mask", or ""
  uint64_t samples = 0;
  double min = 0, max = 0;
  // PM sampling: weighted by each sample's duration (plain mean when none has one); NVML: the mean
  // of the readings. Absent for a bit mask, whose mean means nothing.
  std::optional<double> avg;
  uint64_t first_ns = 0, last_ns = 0;  // first sample's start, last sample's end
};

std::vector<CounterStats> SummarizeCounters(const core::Trace& trace, const std::vector<CounterSeries>& series);
// The unit a counter's name implies.
std::string CounterUnit(std::string_view name);

// `cuscope stats --report gpu_metrics`: a row per device and counter: samples, min, avg, max.
Table GpuMetricsSummary(const Timeline& timeline);

// ---- Utilization over time ---------------------------------------------------------------------

struct UtilizationInterval {
  Interval span;
  uint64_t observed_ns = 0;              // inside the capture windows, without metric collection
  std::optional<double> kernel_busy_pct;  // timeline: union of kernels over observed time
  std::vector<std::optional<double>> values;  // per column, time-weighted over the observed time
  // Timeline busy and sampled SM active differ by at least counter_disagree_points.
  bool disagree = false;
  // A timeline window opened inside it: kernels launched before it and still running are not on
  // the timeline, while the SMs were busy with them.
  bool window_opens = false;
};

struct DeviceUtilization {
  uint32_t device = 0;
  std::vector<std::string> columns;  // "SM active (%)", "DRAM (%)", "SM clock (MHz)", ...
  std::optional<size_t> sm_active_column;
  std::vector<UtilizationInterval> intervals;
  uint64_t samples = 0;
  uint64_t disagreeing = 0;  // intervals flagged
  uint64_t busy_without_sm = 0;  // of them: timeline busier than the SMs
  uint64_t busier_at_window_start = 0;  // of them: SMs busier, where a window opened
};

struct GpuCountersReport {
  uint64_t samples = 0;
  uint64_t counters = 0;  // distinct (device, name) series
  uint64_t device_count = 0;
  std::vector<CounterStats> stats;
  std::vector<DeviceUtilization> devices;  // devices with samples
  double disagree_points = 0;             // the threshold the flags used
};

// Empty (no samples) when the trace has none. The window is the baseline's; it is split into
// `thresholds.gpu_counter_intervals` equal intervals.
GpuCountersReport AnalyzeGpuCounters(const Timeline& timeline, const Baseline& baseline, const Thresholds& thresholds);

std::string RenderGpuCountersText(const GpuCountersReport& report);
// Every device's intervals as one table ("gpu_utilization_over_time"), for --format json.
Table UtilizationTable(const GpuCountersReport& report);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_GPU_COUNTERS_H_
