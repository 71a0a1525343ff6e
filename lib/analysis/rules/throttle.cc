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

    // The spans each power or thermal reason was set, and all of them together.
    std::vector<Interval> any_reason;
    std::array<std::vector<Interval>, kReasons.size()> by_reason;
    uint64_t readings = 0;
    for (size_t i = 0; i < reasons.samples.size(); ++i) {
      const double value = trace.counter_samples[reasons.samples[i]].value;
      if (!std::isfinite(value) || value < 0 || value >= 18446744073709549568.0) continue;
      const uint64_t mask = static_cast<uint64_t>(value) & counter::kPowerOrThermalReasons;
      if (mask == 0) continue;
      ++readings;
      const Interval held = HeldSpan(trace, reasons, i);
      any_reason.push_back(held);
      for (size_t r = 0; r < kReasons.size(); ++r) {
        if (mask & kReasons[r].bit) by_reason[r].push_back(held);
      }
    }
    const IntervalSet throttled = UnionOf(std::move(any_reason));
    if (throttled.empty()) continue;
    std::array<IntervalSet, kReasons.size()> reason_sets;
    for (size_t r = 0; r < kReasons.size(); ++r) reason_sets[r] = UnionOf(std::move(by_reason[r]));

    // Kernel busy time, and the part of it under slowdown, per reason, with the SM clock then.
    const CounterSeries* clock = FindSeries(series, reasons.device, counter::kSmClockMhz);
    std::optional<OrderedAverage> clock_during;
    if (clock != nullptr) clock_during.emplace(trace, *clock);
    uint64_t busy_ns = 0, throttled_ns = 0;
    std::array<uint64_t, kReasons.size()> reason_ns{};
    OrderedClipper clip(throttled);
    ForEachKernelBusyStretch(timeline, *d, [&](Interval stretch) {
      busy_ns += stretch.length();
      clip.Clip(stretch, [&](Interval piece) {
        throttled_ns += piece.length();
        for (size_t r = 0; r < kReasons.size(); ++r) reason_ns[r] += CoveredLength(reason_sets[r], piece);
        if (clock_during) clock_during->Add(piece);
      });
    });
    if (busy_ns == 0) continue;
    const double share = static_cast<double>(throttled_ns) / static_cast<double>(busy_ns);
    if (throttled_ns == 0 || share < thresholds.throttle_min_kernel_share) continue;

    std::optional<double> clock_max;
    if (clock != nullptr) {
      for (uint32_t i : clock->samples) {
        const double v = trace.counter_samples[i].value;
        if (std::isfinite(v) && v > 0 && (!clock_max || v > *clock_max)) clock_max = v;
      }
    }
    const std::optional<double> clock_then = clock_during ? clock_during->mean() : std::nullopt;
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
    f.severity = SeverityFor(f.recoverable_ns, std::max(d->counted_active_ns(), busy_ns), thresholds);
    f.headline = absl::StrCat("GPU ", reasons.device, " ran ", FormatPercent(share), " of its kernel time (",
                              FormatDuration(throttled_ns), " of ", FormatDuration(busy_ns),
                              ") with its clocks held down by ", power && thermal ? "power and heat" : (power ? "power" : "heat"),
                              ": ", absl::StrJoin(names, ", "));
    if (clock_then && clock_max) {
      absl::StrAppend(&f.headline, absl::StrFormat("; SM clock %.0f MHz then, %.0f MHz at most", *clock_then, *clock_max));
    } else {
      absl::StrAppend(&f.headline, "; the SM clock was not sampled");
    }
    f.Add("device", reasons.device, "id");
    f.Add("kernel_busy_ns", static_cast<double>(busy_ns), "ns");
    f.Add("throttled_kernel_ns", static_cast<double>(throttled_ns), "ns");
    f.Add("throttled_share", share, "ratio");
    for (size_t r = 0; r < kReasons.size(); ++r) {
      if (reason_ns[r] > 0) f.Add(absl::StrCat(kReasons[r].key, "_kernel_ns"), static_cast<double>(reason_ns[r]), "ns");
    }
    if (clock_then) f.Add("sm_clock_throttled_mhz", *clock_then, "MHz");
    if (clock_max) f.Add("sm_clock_max_mhz", *clock_max, "MHz");
    f.Add("throttled_readings", static_cast<double>(readings), "count");
    for (size_t r = 0; r < kReasons.size(); ++r) {
      if (reason_ns[r] > 0) f.offenders.push_back(Offender{"reason", kReasons[r].name, 0, reason_ns[r]});
    }
    std::sort(f.offenders.begin(), f.offenders.end(),
              [](const Offender& a, const Offender& b) { return a.time_ns > b.time_ns; });
    // The longest stretches with a reason set, as a reader would look for them on the timeline.
    std::vector<Interval> longest(throttled.begin(), throttled.end());
    std::sort(longest.begin(), longest.end(), [](const Interval& a, const Interval& b) { return a.length() > b.length(); });
    for (size_t i = 0; i < longest.size() && i < 3; ++i) {
      f.spans.push_back(Span{longest[i].begin, longest[i].end, "clocks held down (power or thermal)"});
    }

    f.recommendation = absl::StrCat(
        "The GPU lowered its clocks while the kernels ran, so this run's kernel times are slower than the same work "
        "at full clocks and not comparable with an unthrottled run: compare runs under the same conditions (same "
        "GPU, warmed up, nothing else running on it) and watch `nvidia-smi -q -d PERFORMANCE` during the run.");
    if (power) {
      absl::StrAppend(&f.recommendation,
                      " Power: the workload draws the board's power limit. Check that the limit is the default "
                      "(`nvidia-smi -q -d POWER`); doing less work per result (lower precision such as BF16 or FP8, "
                      "fewer bytes moved, no redundant math) also lowers the power drawn.");
    }
    if (thermal) {
      absl::StrAppend(&f.recommendation,
                      " Heat: the GPU reached its temperature limit (`nvidia-smi -q -d TEMPERATURE`): check cooling, "
                      "airflow and fans; this is the machine, not the program.");
    }
    if (!clock_then || !clock_max) {
      absl::StrAppend(&f.recommendation, " The SM clock was not sampled, so the time lost cannot be estimated.");
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace cuscope::analysis
