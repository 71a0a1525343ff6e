// gpu.throttle: the GPU slowed its clocks for power or heat while the program's kernels ran.
//
// NVML's clocks-event reasons (nvml.clocks_event_reasons, a bit mask read every NVML period) say
// why the clocks are below their maximum. The bits in core::counter::kPowerOrThermalReasons mean
// the GPU ran slower than it could: it reached its power limit (software power cap, hardware power
// brake) or got too hot (software or hardware thermal slowdown, hardware slowdown). Other bits
// (GPU idle, application clocks set, sync boost, display clock) are not the workload's doing and
// never count.
//
// A reading holds until the next one (the last for one period; see gpu_counters.h). What counts is
// the overlap of those spans with the device's kernel busy time on the timeline: throttling while
// the GPU idles costs the program nothing. Reported when that overlap is at least
// `throttle_min_kernel_share` of the device's kernel busy time, with the SM clock during it
// (time-weighted over the throttled kernel time) against the highest SM clock read. The time it
// could recover is the throttled kernel time times the clock lost (1 - clock / max clock): an upper
// bound, since memory-bound kernels slow down less than the SM clock.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/gpu_counters.h"
#include "lib/analysis/kernel_busy.h"
#include "lib/analysis/rules/rules.h"
#include "lib/core/counter_names.h"

namespace cuscope::analysis {
namespace {

namespace counter = core::counter;

struct ReasonInfo {
  uint64_t bit;
  const char* key;   // for the finding's numbers
  const char* name;  // for people
  bool thermal;
};

constexpr std::array<ReasonInfo, 5> kReasons = {{
    {counter::kReasonSwPowerCap, "sw_power_cap", "software power cap", false},
    {counter::kReasonHwSlowdown, "hw_slowdown", "hardware slowdown (power brake or overheating)", true},
    {counter::kReasonSwThermalSlowdown, "sw_thermal_slowdown", "software thermal slowdown", true},
    {counter::kReasonHwThermalSlowdown, "hw_thermal_slowdown", "hardware thermal slowdown", true},
    {counter::kReasonHwPowerBrakeSlowdown, "hw_power_brake", "hardware power brake", false},
}};

const CounterSeries* FindSeries(const std::vector<CounterSeries>& series, uint32_t device, std::string_view name) {
  for (const CounterSeries& s : series) {
    if (s.device == device && s.name == name) return &s;
  }
  return nullptr;
}

// The time-weighted mean of a series over pieces of time handed in in order.
class OrderedAverage {
 public:
  OrderedAverage(const core::Trace& trace, const CounterSeries& series) : trace_(trace), series_(series) {}
  void Add(Interval piece) {
    const size_t n = series_.samples.size();
    while (next_ < n && HeldSpan(trace_, series_, next_).end <= piece.begin) ++next_;
    for (size_t i = next_; i < n; ++i) {
      const Interval held = HeldSpan(trace_, series_, i);
      if (held.begin >= piece.end) break;
      const double value = trace_.counter_samples[series_.samples[i]].value;
      const uint64_t lo = std::max(held.begin, piece.begin), hi = std::min(held.end, piece.end);
      if (!std::isfinite(value) || hi <= lo) continue;
      const uint64_t overlap = hi - lo;
      sum_ += value * static_cast<double>(overlap);
      weight_ += static_cast<double>(overlap);
    }
  }
  std::optional<double> mean() const { return weight_ > 0 ? std::optional<double>(sum_ / weight_) : std::nullopt; }

 private:
  const core::Trace& trace_;
  const CounterSeries& series_;
  size_t next_ = 0;
  double sum_ = 0, weight_ = 0;
};

// The spans each power or thermal reason was set, and all of them together.
struct ReasonSpans {
  IntervalSet throttled;
  std::array<IntervalSet, kReasons.size()> by_reason;
  uint64_t readings = 0;
};

ReasonSpans SpansOfReasons(const core::Trace& trace, const CounterSeries& reasons) {
  ReasonSpans out;
  std::vector<Interval> any_reason;
  std::array<std::vector<Interval>, kReasons.size()> by_reason;
  for (size_t i = 0; i < reasons.samples.size(); ++i) {
    const double value = trace.counter_samples[reasons.samples[i]].value;
    if (!std::isfinite(value) || value < 0 || value >= 18446744073709549568.0) continue;
    const uint64_t mask = static_cast<uint64_t>(value) & counter::kPowerOrThermalReasons;
    if (mask == 0) continue;
    ++out.readings;
    const Interval held = HeldSpan(trace, reasons, i);
    any_reason.push_back(held);
    for (size_t r = 0; r < kReasons.size(); ++r) {
      if (mask & kReasons[r].bit) by_reason[r].push_back(held);
    }
  }
  out.throttled = UnionOf(std::move(any_reason));
  if (out.throttled.empty()) return out;
  for (size_t r = 0; r < kReasons.size(); ++r) out.by_reason[r] = UnionOf(std::move(by_reason[r]));
  return out;
}

// Kernel busy time, and the part of it under slowdown, per reason, with the SM clock then.
struct ThrottledKernels {
  uint64_t busy_ns = 0, throttled_ns = 0;
  std::array<uint64_t, kReasons.size()> reason_ns{};
  std::optional<double> clock_then;  // the SM clock, time-weighted over the throttled kernel time
};

ThrottledKernels MeasureThrottledKernels(const Timeline& timeline, const DeviceTimeline& d, const ReasonSpans& spans,
                                         const CounterSeries* clock) {
  ThrottledKernels out;
  std::optional<OrderedAverage> clock_during;
  if (clock != nullptr) clock_during.emplace(timeline.trace(), *clock);
  OrderedClipper clip(spans.throttled);
  ForEachKernelBusyStretch(timeline, d, [&](Interval stretch) {
    out.busy_ns += stretch.length();
    clip.Clip(stretch, [&](Interval piece) {
      out.throttled_ns += piece.length();
      for (size_t r = 0; r < kReasons.size(); ++r) out.reason_ns[r] += CoveredLength(spans.by_reason[r], piece);
      if (clock_during) clock_during->Add(piece);
    });
  });
  out.clock_then = clock_during ? clock_during->mean() : std::nullopt;
  return out;
}

// The highest SM clock read: what the GPU runs at unthrottled, for the share of the clock lost.
std::optional<double> MaxClock(const core::Trace& trace, const CounterSeries* clock) {
  std::optional<double> clock_max;
  if (clock != nullptr) {
    for (uint32_t i : clock->samples) {
      const double v = trace.counter_samples[i].value;
      if (std::isfinite(v) && v > 0 && (!clock_max || v > *clock_max)) clock_max = v;
    }
  }
  return clock_max;
}

// Power and heat have different remedies (the workload, or the machine), so the advice names each
// one that was seen.
std::string ThrottleRecommendation(bool power, bool thermal, bool clock_known) {
  std::string text = absl::StrCat(
      "The GPU lowered its clocks while the kernels ran, so this run's kernel times are slower than the same work "
      "at full clocks and not comparable with an unthrottled run: compare runs under the same conditions (same "
      "GPU, warmed up, nothing else running on it) and watch `nvidia-smi -q -d PERFORMANCE` during the run.");
  if (power) {
    absl::StrAppend(&text,
                    " Power: the workload draws the board's power limit. Check that the limit is the default "
                    "(`nvidia-smi -q -d POWER`); doing less work per result (lower precision such as BF16 or FP8, "
                    "fewer bytes moved, no redundant math) also lowers the power drawn.");
  }
  if (thermal) {
    absl::StrAppend(&text,
                    " Heat: the GPU reached its temperature limit (`nvidia-smi -q -d TEMPERATURE`): check cooling, "
                    "airflow and fans; this is the machine, not the program.");
  }
  if (!clock_known) {
    absl::StrAppend(&text, " The SM clock was not sampled, so the time lost cannot be estimated.");
  }
  return text;
}

Finding ThrottleFinding(uint32_t device, const DeviceTimeline& d, const ReasonSpans& spans, const ThrottledKernels& t,
                        std::optional<double> clock_max, const Thresholds& thresholds) {
  const uint64_t busy_ns = t.busy_ns, throttled_ns = t.throttled_ns;
  const std::array<uint64_t, kReasons.size()>& reason_ns = t.reason_ns;
  const std::optional<double>& clock_then = t.clock_then;
  const double share = static_cast<double>(throttled_ns) / static_cast<double>(busy_ns);
  double lost = 0;  // share of the clock lost while throttled
  if (clock_then && clock_max && *clock_max > 0) lost = std::clamp(1.0 - *clock_then / *clock_max, 0.0, 1.0);

  std::vector<std::string> names;
  bool power = false, thermal = false;
  for (size_t r = 0; r < kReasons.size(); ++r) {
    if (reason_ns[r] == 0) continue;
    names.push_back(kReasons[r].name);
    (kReasons[r].thermal ? thermal : power) = true;
  }

  Finding f;
  f.rule_id = "gpu.throttle";
  f.recoverable_ns = ClampToU64(static_cast<double>(throttled_ns) * lost);
  f.severity = SeverityFor(f.recoverable_ns, std::max(d.counted_active_ns(), busy_ns), thresholds);
  f.headline = absl::StrCat("GPU ", device, " ran ", FormatPercent(share), " of its kernel time (",
                            FormatDuration(throttled_ns), " of ", FormatDuration(busy_ns),
                            ") with its clocks held down by ", power && thermal ? "power and heat" : (power ? "power" : "heat"),
                            ": ", absl::StrJoin(names, ", "));
  if (clock_then && clock_max) {
    absl::StrAppend(&f.headline, absl::StrFormat("; SM clock %.0f MHz then, %.0f MHz at most", *clock_then, *clock_max));
  } else {
    absl::StrAppend(&f.headline, "; the SM clock was not sampled");
  }
  f.Add("device", device, "id");
  f.Add("kernel_busy_ns", static_cast<double>(busy_ns), "ns");
  f.Add("throttled_kernel_ns", static_cast<double>(throttled_ns), "ns");
  f.Add("throttled_share", share, "ratio");
  for (size_t r = 0; r < kReasons.size(); ++r) {
    if (reason_ns[r] > 0) f.Add(absl::StrCat(kReasons[r].key, "_kernel_ns"), static_cast<double>(reason_ns[r]), "ns");
  }
  if (clock_then) f.Add("sm_clock_throttled_mhz", *clock_then, "MHz");
  if (clock_max) f.Add("sm_clock_max_mhz", *clock_max, "MHz");
  f.Add("throttled_readings", static_cast<double>(spans.readings), "count");
  for (size_t r = 0; r < kReasons.size(); ++r) {
    if (reason_ns[r] > 0) f.offenders.push_back(Offender{"reason", kReasons[r].name, 0, reason_ns[r]});
  }
  std::sort(f.offenders.begin(), f.offenders.end(),
            [](const Offender& a, const Offender& b) { return a.time_ns > b.time_ns; });
  // The longest stretches with a reason set, as a reader would look for them on the timeline.
  std::vector<Interval> longest(spans.throttled.begin(), spans.throttled.end());
  std::sort(longest.begin(), longest.end(), [](const Interval& a, const Interval& b) { return a.length() > b.length(); });
  for (size_t i = 0; i < longest.size() && i < 3; ++i) {
    f.spans.push_back(Span{longest[i].begin, longest[i].end, "clocks held down (power or thermal)"});
  }
  f.recommendation = ThrottleRecommendation(power, thermal, clock_then && clock_max);
  return f;
}

}  // namespace

std::vector<Finding> ThrottleRule(const Timeline& timeline, const Thresholds& thresholds) {
  const core::Trace& trace = timeline.trace();
  if (trace.counter_samples.empty()) return {};
  const std::vector<CounterSeries> series = GroupCounterSeries(trace);
  std::vector<Finding> findings;
  for (const CounterSeries& reasons : series) {
    if (reasons.name != counter::kClocksEventReasons) continue;
    const DeviceTimeline* d = nullptr;
    for (const DeviceTimeline& candidate : timeline.devices()) {
      if (candidate.device == reasons.device) d = &candidate;
    }
    if (d == nullptr) continue;  // no GPU work on that device

    const ReasonSpans spans = SpansOfReasons(trace, reasons);
    if (spans.throttled.empty()) continue;
    const CounterSeries* clock = FindSeries(series, reasons.device, counter::kSmClockMhz);
    const ThrottledKernels t = MeasureThrottledKernels(timeline, *d, spans, clock);
    if (t.busy_ns == 0) continue;
    const double share = static_cast<double>(t.throttled_ns) / static_cast<double>(t.busy_ns);
    if (t.throttled_ns == 0 || share < thresholds.throttle_min_kernel_share) continue;
    findings.push_back(ThrottleFinding(reasons.device, *d, spans, t, MaxClock(trace, clock), thresholds));
  }
  return findings;
}

}  // namespace cuscope::analysis
