#include "lib/analysis/gpu_counters.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/kernel_busy.h"
#include "lib/core/counter_names.h"

namespace cuscope::analysis {
namespace {

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

int SourceOrder(v1::CounterSource source) {
  switch (source) {
    case v1::COUNTER_SOURCE_PM_SAMPLING: return 0;
    case v1::COUNTER_SOURCE_NVML: return 1;
    default: return 2;
  }
}

std::string SourceName(v1::CounterSource source) {
  switch (source) {
    case v1::COUNTER_SOURCE_PM_SAMPLING: return "pm";
    case v1::COUNTER_SOURCE_NVML: return "nvml";
    default: return "unknown";
  }
}

const v1::Device* FindDevice(const core::Trace& trace, uint32_t device) {
  for (const v1::Device& d : trace.header.devices()) {
    if (d.id() == device) return &d;
  }
  return nullptr;
}

// Equal intervals of a span, with their boundaries computed without overflow.
class Buckets {
 public:
  Buckets(Interval span, size_t n) {
    const uint64_t len = span.length();
    for (size_t b = 0; b <= n; ++b) {
      const uint64_t offset = (len / n) * b + (len % n) * b / n;
      bounds_.push_back(span.begin + offset);
    }
  }
  size_t size() const { return bounds_.size() - 1; }
  Interval at(size_t b) const { return {bounds_[b], bounds_[b + 1]}; }
  // Calls fn(bucket, piece) for each part of `x` inside a bucket.
  template <typename Fn>
  void Split(Interval x, Fn&& fn) const {
    if (x.empty() || size() == 0) return;
    x.begin = std::max(x.begin, bounds_.front());
    x.end = std::min(x.end, bounds_.back());
    if (x.empty()) return;
    size_t b = static_cast<size_t>(std::upper_bound(bounds_.begin(), bounds_.end(), x.begin) - bounds_.begin()) - 1;
    for (; b < size() && bounds_[b] < x.end; ++b) {
      const Interval piece{std::max(x.begin, bounds_[b]), std::min(x.end, bounds_[b + 1])};
      if (!piece.empty()) fn(b, piece);
    }
  }

 private:
  std::vector<uint64_t> bounds_;
};

// A column of the utilization table: one counter, or (DRAM from bytes per second) the scaled sum of
// a few.
struct ColumnSpec {
  std::string label;
  std::vector<const CounterSeries*> parts;  // the first must be present in an interval for a value
  double scale = 1;
  int decimals = 1;
};

const CounterSeries* Find(const std::vector<const CounterSeries*>& series, std::string_view name) {
  for (const CounterSeries* s : series) {
    if (s->name == name) return s;
  }
  return nullptr;
}

std::vector<ColumnSpec> KnownColumns(const core::Trace& trace, uint32_t device,
                                     const std::vector<const CounterSeries*>& series) {
  std::vector<ColumnSpec> columns;
  if (const CounterSeries* s = Find(series, pm_counter::kSmActivePct)) columns.push_back({"SM active (%)", {s}, 1, 1});
  if (const CounterSeries* s = Find(series, pm_counter::kSmIssuePct)) columns.push_back({"SM issue (%)", {s}, 1, 1});
  if (const CounterSeries* s = Find(series, pm_counter::kSmThroughputPct)) {
    columns.push_back({"SM throughput (%)", {s}, 1, 1});
  }
  if (const CounterSeries* s = Find(series, pm_counter::kTensorActivePct)) {
    columns.push_back({"tensor active (%)", {s}, 1, 1});
  }
  const CounterSeries* dram = Find(series, pm_counter::kDramThroughputPct);
  if (dram == nullptr) dram = Find(series, pm_counter::kGpuDramThroughputPct);
  const CounterSeries* dram_read = Find(series, pm_counter::kDramReadPct);
  if (dram != nullptr) {
    columns.push_back({"DRAM (%)", {dram}, 1, 1});
  } else if (dram_read != nullptr) {
    // Read and write bandwidth against the same peak: their sum is the DRAM throughput.
    ColumnSpec c{"DRAM read+write (%)", {dram_read}, 1, 1};
    if (const CounterSeries* write = Find(series, pm_counter::kDramWritePct)) c.parts.push_back(write);
    columns.push_back(std::move(c));
  } else if (const CounterSeries* read = Find(series, pm_counter::kDramReadBytesPerSecond)) {
    // Bytes per second against the device's peak DRAM bandwidth from the header.
    const v1::Device* d = FindDevice(trace, device);
    if (d != nullptr && d->peak_dram_bytes_per_second() > 0) {
      ColumnSpec c{"DRAM (%, from bytes/s)", {read}, 100.0 / static_cast<double>(d->peak_dram_bytes_per_second()), 1};
      if (const CounterSeries* write = Find(series, pm_counter::kDramWriteBytesPerSecond)) c.parts.push_back(write);
      columns.push_back(std::move(c));
    }
  }
  if (const CounterSeries* s = Find(series, core::counter::kSmClockMhz)) columns.push_back({"SM clock (MHz)", {s}, 1, 0});
  if (const CounterSeries* s = Find(series, core::counter::kPowerWatts)) columns.push_back({"power (W)", {s}, 1, 0});
  return columns;
}

// Per bucket: the weighted sum and the weight of one series over each bucket's observed time.
std::vector<std::pair<double, double>> BucketAverages(const core::Trace& trace, const CounterSeries& s,
                                                      const Buckets& buckets,
                                                      const std::vector<IntervalSet>& observed) {
  std::vector<std::pair<double, double>> acc(buckets.size(), {0.0, 0.0});
  for (size_t i = 0; i < s.samples.size(); ++i) {
    const double value = trace.counter_samples[s.samples[i]].value;
    if (!std::isfinite(value)) continue;
    buckets.Split(HeldSpan(trace, s, i), [&](size_t b, Interval piece) {
      const double w = static_cast<double>(CoveredLength(observed[b], piece));
      acc[b].first += value * w;
      acc[b].second += w;
    });
  }
  return acc;
}

std::string Cell(const std::optional<double>& v, int decimals) {
  return v && std::isfinite(*v) ? absl::StrFormat("%.*f", decimals, *v) : std::string();
}

}  // namespace

std::vector<CounterSeries> GroupCounterSeries(const core::Trace& trace) {
  // Samples arrive series by series (a chunk holds each series as one column), so the last series
  // looked up is nearly always the next one's.
  absl::flat_hash_map<std::tuple<uint32_t, int, uint32_t>, size_t> slot_of;
  std::vector<CounterSeries> out;
  size_t last = SIZE_MAX;
  for (uint32_t i = 0; i < trace.counter_samples.size(); ++i) {
    const core::CounterSample& c = trace.counter_samples[i];
    if (last == SIZE_MAX || out[last].device != c.device || out[last].source != c.source || out[last].name_id != c.name) {
      auto [it, inserted] = slot_of.try_emplace({c.device, SourceOrder(c.source), c.name}, out.size());
      if (inserted) {
        CounterSeries& s = out.emplace_back();
        s.device = c.device;
        s.source = c.source;
        s.name_id = c.name;
        s.name = trace.dict.str(c.name);
      }
      last = it->second;
    }
    out[last].samples.push_back(i);
  }
  std::sort(out.begin(), out.end(), [](const CounterSeries& a, const CounterSeries& b) {
    return std::make_tuple(a.device, SourceOrder(a.source), std::string_view(a.name)) <
           std::make_tuple(b.device, SourceOrder(b.source), std::string_view(b.name));
  });
  for (CounterSeries& s : out) {
    auto by_start = [&trace](uint32_t a, uint32_t b) {
      return trace.counter_samples[a].start < trace.counter_samples[b].start;
    };
    if (!std::is_sorted(s.samples.begin(), s.samples.end(), by_start)) {
      std::stable_sort(s.samples.begin(), s.samples.end(), by_start);
    }
    bool any_duration = false;
    for (uint32_t i : s.samples) any_duration |= trace.counter_samples[i].end > trace.counter_samples[i].start;
    s.instantaneous = s.source == v1::COUNTER_SOURCE_NVML || !any_duration;
    if (s.instantaneous && s.samples.size() > 1) {
      std::vector<uint64_t> gaps;
      gaps.reserve(s.samples.size() - 1);
      for (size_t i = 1; i < s.samples.size(); ++i) {
        gaps.push_back(trace.counter_samples[s.samples[i]].start - trace.counter_samples[s.samples[i - 1]].start);
      }
      std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
      s.last_hold_ns = gaps[gaps.size() / 2];
    }
  }
  return out;
}

Interval HeldSpan(const core::Trace& trace, const CounterSeries& series, size_t i) {
  const core::CounterSample& c = trace.counter_samples[series.samples[i]];
  if (!series.instantaneous) return {c.start, std::max(c.start, c.end)};
  if (i + 1 < series.samples.size()) return {c.start, std::max(c.start, trace.counter_samples[series.samples[i + 1]].start)};
  return {c.start, c.start + series.last_hold_ns};
}

std::optional<double> AverageOver(const core::Trace& trace, const CounterSeries& series, const IntervalSet& over) {
  double sum = 0, weight = 0;
  for (size_t i = 0; i < series.samples.size(); ++i) {
    const double value = trace.counter_samples[series.samples[i]].value;
    if (!std::isfinite(value)) continue;
    const double w = static_cast<double>(CoveredLength(over, HeldSpan(trace, series, i)));
    sum += value * w;
    weight += w;
  }
  if (weight <= 0) return std::nullopt;
  return sum / weight;
}

std::string CounterUnit(std::string_view name) {
  const absl::string_view n = Absl(name);
  if (n == core::counter::kClocksEventReasons) return "mask";
  if (absl::StartsWith(n, "nvml.")) {
    if (absl::EndsWith(n, "_w")) return "W";
    if (absl::EndsWith(n, "_c")) return "C";
    if (absl::EndsWith(n, "_mhz")) return "MHz";
    if (absl::EndsWith(n, "_bytes")) return "bytes";
    if (absl::EndsWith(n, "_pct")) return "%";
    return "";
  }
  if (absl::StrContains(n, ".pct_of_peak") || absl::EndsWith(n, ".pct")) return "%";
  if (absl::EndsWith(n, ".per_second")) return absl::StrContains(n, "bytes") ? "bytes/s" : "1/s";
  if (absl::StrContains(n, "__bytes")) return "bytes";
  return "";
}

std::vector<CounterStats> SummarizeCounters(const core::Trace& trace, const std::vector<CounterSeries>& series) {
  std::vector<CounterStats> out;
  for (const CounterSeries& s : series) {
    CounterStats st;
    st.device = s.device;
    st.source = s.source;
    st.name = s.name;
    st.unit = CounterUnit(s.name);
    double sum = 0, weighted = 0, weight = 0;
    uint64_t finite = 0;
    for (uint32_t i : s.samples) {
      const core::CounterSample& c = trace.counter_samples[i];
      if (st.samples == 0) st.first_ns = c.start;
      st.last_ns = std::max(st.last_ns, std::max(c.start, c.end));
      ++st.samples;
      if (!std::isfinite(c.value)) continue;  // a counter the device could not produce at that moment
      if (finite == 0 || c.value < st.min) st.min = c.value;
      if (finite == 0 || c.value > st.max) st.max = c.value;
      ++finite;
      sum += c.value;
      const double d = c.end > c.start ? static_cast<double>(c.end - c.start) : 0;
      weighted += c.value * d;
      weight += d;
    }
    if (finite > 0 && st.unit != "mask") {
      st.avg = !s.instantaneous && weight > 0 ? weighted / weight : sum / static_cast<double>(finite);
    }
    out.push_back(std::move(st));
  }
  return out;
}

Table GpuMetricsSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Table t;
  t.name = "gpu_metrics";
  t.title = "GPU counters sampled over time: min, average (time-weighted for PM samples) and max per device and counter";
  t.columns = {{"Device", ColumnType::kInteger}, {"Samples", ColumnType::kInteger}, {"Min", ColumnType::kDecimal},
               {"Avg", ColumnType::kDecimal},    {"Max", ColumnType::kDecimal},     {"Unit", ColumnType::kText},
               {"Source", ColumnType::kText},    {"Name", ColumnType::kText}};
  for (const CounterStats& s : SummarizeCounters(trace, GroupCounterSeries(trace))) {
    const bool any = s.samples > 0 && (s.avg.has_value() || s.unit == "mask");
    t.rows.push_back({absl::StrCat(s.device), absl::StrCat(s.samples), any ? Cell(s.min, 2) : std::string(),
                      Cell(s.avg, 2), any ? Cell(s.max, 2) : std::string(), s.unit, SourceName(s.source), s.name});
  }
  return t;
}

GpuCountersReport AnalyzeGpuCounters(const Timeline& timeline, const Baseline& baseline, const Thresholds& thresholds) {
  GpuCountersReport r;
  const core::Trace& trace = timeline.trace();
  if (trace.counter_samples.empty()) return r;
  const std::vector<CounterSeries> series = GroupCounterSeries(trace);
  r.samples = trace.counter_samples.size();
  r.counters = series.size();
  r.stats = SummarizeCounters(trace, series);
  r.disagree_points = thresholds.counter_disagree_points;
  std::vector<uint32_t> devices;
  for (const CounterSeries& s : series) {
    if (std::find(devices.begin(), devices.end(), s.device) == devices.end()) devices.push_back(s.device);
  }
  std::sort(devices.begin(), devices.end());
  r.device_count = devices.size();
  if (baseline.windows.empty()) return r;

  const Interval hull = Hull(baseline.windows);
  const size_t n = static_cast<size_t>(std::clamp(thresholds.gpu_counter_intervals, 1.0, 1000.0));
  const Buckets buckets(hull, n);
  // What each interval is judged on: inside the windows, metric collection left out.
  const IntervalSet counted =
      timeline.metric_windows().empty() ? baseline.windows : Subtract(baseline.windows, timeline.metric_windows());
  std::vector<IntervalSet> observed(buckets.size());
  for (size_t b = 0; b < buckets.size(); ++b) observed[b] = Intersect(counted, IntervalSet{buckets.at(b)});

  for (uint32_t device : devices) {
    std::vector<const CounterSeries*> mine;
    for (const CounterSeries& s : series) {
      if (s.device == device) mine.push_back(&s);
    }
    DeviceUtilization du;
    du.device = device;
    for (const CounterSeries* s : mine) du.samples += s->samples.size();
    const std::vector<ColumnSpec> columns = KnownColumns(trace, device, mine);
    for (size_t c = 0; c < columns.size(); ++c) {
      du.columns.push_back(columns[c].label);
      if (columns[c].parts.front()->name == pm_counter::kSmActivePct) du.sm_active_column = c;
    }
    // Kernel busy per interval: the device's busy stretches clipped to the counted time.
    std::vector<uint64_t> busy(buckets.size(), 0);
    for (const DeviceTimeline& d : timeline.devices()) {
      if (d.device != device) continue;
      OrderedClipper clip(counted);
      ForEachKernelBusyStretch(timeline, d, [&](Interval stretch) {
        clip.Clip(stretch, [&](Interval piece) {
          buckets.Split(piece, [&](size_t b, Interval part) { busy[b] += part.length(); });
        });
      });
    }
    // Each column's average per interval.
    std::vector<std::vector<std::optional<double>>> values(columns.size(),
                                                           std::vector<std::optional<double>>(buckets.size()));
    for (size_t c = 0; c < columns.size(); ++c) {
      std::vector<std::vector<std::pair<double, double>>> parts;
      for (const CounterSeries* s : columns[c].parts) parts.push_back(BucketAverages(trace, *s, buckets, observed));
      for (size_t b = 0; b < buckets.size(); ++b) {
        if (parts.front()[b].second <= 0) continue;
        double v = 0;
        for (const auto& p : parts) {
          if (p[b].second > 0) v += p[b].first / p[b].second;
        }
        values[c][b] = v * columns[c].scale;
      }
    }
    for (size_t b = 0; b < buckets.size(); ++b) {
      UtilizationInterval u;
      u.span = buckets.at(b);
      u.observed_ns = TotalLength(observed[b]);
      if (u.observed_ns > 0) u.kernel_busy_pct = 100.0 * static_cast<double>(busy[b]) / static_cast<double>(u.observed_ns);
      for (size_t c = 0; c < columns.size(); ++c) u.values.push_back(values[c][b]);
      if (baseline.windows_recorded) {
        for (const Interval& w : baseline.windows) {
          if (w.begin >= u.span.begin && w.begin < u.span.end) u.window_opens = true;
        }
      }
      if (du.sm_active_column && u.kernel_busy_pct && u.values[*du.sm_active_column]) {
        const double diff = *u.kernel_busy_pct - *u.values[*du.sm_active_column];
        if (std::abs(diff) >= thresholds.counter_disagree_points) {
          u.disagree = true;
          ++du.disagreeing;
          if (diff > 0) ++du.busy_without_sm;
          if (diff < 0 && u.window_opens) ++du.busier_at_window_start;
        }
      }
      du.intervals.push_back(std::move(u));
    }
    r.devices.push_back(std::move(du));
  }
  return r;
}

namespace {

// One device's intervals as a table, times from `origin` (the window's start), for the text report.
Table DeviceTable(const DeviceUtilization& du, uint64_t origin) {
  Table t;
  t.name = "gpu_utilization_over_time";
  const uint64_t width = du.intervals.empty() ? 0 : du.intervals.front().span.length();
  t.title = absl::StrCat("GPU ", du.device, " over the timeline window, ", du.intervals.size(), " intervals of ",
                         FormatDuration(width), ": kernel busy from the timeline, the rest sampled");
  t.columns = {{"From", ColumnType::kText}, {"Kernel busy (%)", ColumnType::kPercent}};
  for (const std::string& c : du.columns) {
    const bool pct = absl::StrContains(c, "(%");
    t.columns.push_back({c, pct ? ColumnType::kPercent : ColumnType::kDecimal});
  }
  t.columns.push_back({"Note", ColumnType::kText});
  for (const UtilizationInterval& u : du.intervals) {
    std::vector<std::string> row = {absl::StrCat("+", FormatDuration(u.span.begin - origin)), Cell(u.kernel_busy_pct, 1)};
    for (size_t c = 0; c < du.columns.size(); ++c) {
      row.push_back(Cell(u.values[c], absl::StrContains(du.columns[c], "(%") ? 1 : 0));
    }
    std::string note;
    if (u.observed_ns == 0) {
      note = "timeline off";
    } else if (u.disagree && du.sm_active_column) {
      const double diff = *u.kernel_busy_pct - *u.values[*du.sm_active_column];
      // Two literal formats: clang checks absl::StrFormat's format at compile time.
      note = diff > 0 ? absl::StrFormat("busy, SMs idle (%.0f points)", std::abs(diff))
                      : absl::StrFormat("SMs busier than the timeline (%.0f points)", std::abs(diff));
      if (diff < 0 && u.window_opens) note += "; the window opened here";
    }
    row.push_back(note);
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string Indented(const std::string& text, const std::string& indent) {
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    // A row whose last cell (the note) is empty would end in the column separator.
    while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
    if (!line.empty()) absl::StrAppend(&out, indent, Absl(line));
    out += "\n";
    begin = end + 1;
  }
  return out;
}

}  // namespace

std::string RenderGpuCountersText(const GpuCountersReport& r) {
  if (r.samples == 0) return "";
  std::string out = absl::StrCat("GPU counters: ", r.samples, r.samples == 1 ? " sample of " : " samples of ", r.counters,
                                 r.counters == 1 ? " counter on " : " counters on ", r.device_count,
                                 r.device_count == 1 ? " GPU" : " GPUs",
                                 " (min, average and max of each: gpu_metrics below)\n\n");
  for (const DeviceUtilization& du : r.devices) {
    if (du.intervals.empty()) continue;
    out += Indented(RenderText(DeviceTable(du, du.intervals.front().span.begin)), "  ");
    if (!du.sm_active_column) {
      absl::StrAppend(&out, "  (no SM activity counter was sampled on GPU ", du.device, " (", Absl(pm_counter::kSmActivePct),
                      "): the timeline's busy time cannot be checked against the SMs)\n");
    } else if (du.disagreeing > 0) {
      absl::StrAppend(&out, "  In ", du.disagreeing, " of ", du.intervals.size(),
                      " intervals the timeline's kernel busy time and the sampled SM activity differ by ",
                      absl::StrFormat("%.0f", r.disagree_points), " points or more.");
      if (du.busy_without_sm > 0) {
        absl::StrAppend(&out, " Where kernels ran but few SMs were active, the kernels occupy few SMs (grids of "
                              "fewer blocks than SMs, one long tail block) or wait (host-mapped memory, spin loops).");
      }
      if (du.busier_at_window_start > 0) {
        absl::StrAppend(&out, " Where a window opened, kernels launched before it were still running: the SMs were "
                              "busy with work the timeline starts after.");
      }
      if (du.busy_without_sm + du.busier_at_window_start < du.disagreeing) {
        absl::StrAppend(&out, " Where the SMs were busier than the timeline shows, work the trace did not record ran "
                              "on the GPU: another process, or dropped records.");
      }
      out += "\n";
    } else {
      absl::StrAppend(&out, "  The timeline's kernel busy time and the sampled SM activity agree within ",
                      absl::StrFormat("%.0f", r.disagree_points), " points in every interval.\n");
    }
    out += "\n";
  }
  return out;
}

Table UtilizationTable(const GpuCountersReport& r) {
  Table t;
  t.name = "gpu_utilization_over_time";
  t.title = "GPU utilization over the timeline window: kernel busy from the timeline next to the sampled counters";
  std::vector<std::string> labels;
  for (const DeviceUtilization& du : r.devices) {
    for (const std::string& c : du.columns) {
      if (std::find(labels.begin(), labels.end(), c) == labels.end()) labels.push_back(c);
    }
  }
  t.columns = {{"Device", ColumnType::kInteger},      {"Start (ns)", ColumnType::kInteger},
               {"End (ns)", ColumnType::kInteger},    {"Observed (ns)", ColumnType::kInteger},
               {"Kernel Busy (%)", ColumnType::kPercent}};
  for (const std::string& l : labels) t.columns.push_back({l, ColumnType::kDecimal});
  t.columns.push_back({"Disagree", ColumnType::kText});
  for (const DeviceUtilization& du : r.devices) {
    for (const UtilizationInterval& u : du.intervals) {
      std::vector<std::string> row = {absl::StrCat(du.device), absl::StrCat(u.span.begin), absl::StrCat(u.span.end),
                                      absl::StrCat(u.observed_ns), Cell(u.kernel_busy_pct, 1)};
      for (const std::string& l : labels) {
        const auto it = std::find(du.columns.begin(), du.columns.end(), l);
        row.push_back(it == du.columns.end() ? std::string() : Cell(u.values[it - du.columns.begin()], 2));
      }
      row.push_back(u.disagree ? "yes" : "");
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

}  // namespace cuscope::analysis
