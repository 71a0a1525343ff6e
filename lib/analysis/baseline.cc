#include "lib/analysis/baseline.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/kernel_busy.h"

namespace cuscope::analysis {
namespace {

double Share(uint64_t part, uint64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

std::string Rate(double per_second) {
  return per_second >= 100 ? absl::StrFormat("%.0f", per_second) : absl::StrFormat("%.3g", per_second);
}

}  // namespace

uint64_t Baseline::UnobservedNs(uint32_t device) const {
  for (const DeviceBaseline& d : devices) {
    if (d.device == device) return d.unobserved_ns;
  }
  return 0;
}

const DeviceBaseline* Baseline::Device(uint32_t device) const {
  for (const DeviceBaseline& d : devices) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

Baseline ComputeBaseline(const Timeline& timeline) {
  Baseline b;
  b.windows_recorded = timeline.has_capture_windows();
  if (b.windows_recorded) {
    b.windows = timeline.capture_windows();
  } else if (!timeline.span().empty()) {
    b.windows = {timeline.span()};
  }
  b.window_count = b.windows.size();
  b.wall_ns = TotalLength(b.windows);
  // Replays serialize the context for 100s of ms: that time is the profiler's, not the run's.
  const IntervalSet counted =
      timeline.metric_windows().empty() ? b.windows : Subtract(b.windows, timeline.metric_windows());
  b.counted_ns = TotalLength(counted);
  b.metrics_ns = b.wall_ns - std::min(b.wall_ns, b.counted_ns);

  const core::Trace& trace = timeline.trace();
  for (const DeviceTimeline& d : timeline.devices()) {
    DeviceBaseline db;
    db.device = d.device;
    db.unobserved_ns = d.unobserved_idle_ns();
    for (OpRef op : d.ops) {
      if (op.kind() != OpKind::kKernel) continue;
      const core::KernelRow& k = trace.kernels[op.index()];
      const Interval x{k.start, std::max(k.start, k.end)};
      uint64_t inside = 0;
      const bool ran_inside = RanInside(b.windows, x, &inside);
      db.kernel_ns_outside += x.length() - inside;
      if (!ran_inside) {  // ran while the timeline was off
        ++db.kernels_outside;
        continue;
      }
      ++db.kernels;
      db.kernel_ns += inside;
    }
    OrderedClipper clip(counted);
    ForEachKernelBusyStretch(timeline, d, [&](Interval stretch) {
      clip.Clip(stretch, [&](Interval piece) { db.busy_ns += piece.length(); });
    });
    db.utilization = Share(db.busy_ns, b.counted_ns);
    b.kernels += db.kernels;
    b.kernel_ns += db.kernel_ns;
    b.busy_ns += db.busy_ns;
    b.devices.push_back(db);
  }
  if (!b.devices.empty()) b.utilization = Share(b.busy_ns, b.counted_ns * b.devices.size());
  if (b.counted_ns > 0) b.launches_per_second = static_cast<double>(b.kernels) / (static_cast<double>(b.counted_ns) * 1e-9);
  return b;
}

std::string RenderBaselineText(const Baseline& b) {
  std::string out = "Baseline: ";
  if (b.wall_ns == 0) return absl::StrCat(out, "no timeline recorded\n");
  absl::StrAppend(&out, FormatDuration(b.wall_ns), " timeline window");
  std::vector<std::string> notes;
  if (!b.windows_recorded) {
    notes.push_back("no capture window in the trace: first to last activity");
  } else if (b.window_count > 1) {
    notes.push_back(absl::StrCat(b.window_count, " windows"));
  }
  if (b.metrics_ns > 0) notes.push_back(absl::StrCat(FormatDuration(b.metrics_ns), " of metric collection left out"));
  for (size_t i = 0; i < notes.size(); ++i) absl::StrAppend(&out, i == 0 ? " (" : "; ", notes[i]);
  if (!notes.empty()) out += ")";
  // "of the window": the busy share of the GPU lines is of the GPU's active span, a different
  // denominator; both say which.
  absl::StrAppend(&out, ", ", FormatDuration(b.kernel_ns), " kernel time, GPU utilization ",
                  FormatPercent(b.utilization), " of the window, ", b.kernels, b.kernels == 1 ? " kernel, " : " kernels, ",
                  Rate(b.launches_per_second), " launches/s\n");
  if (b.devices.size() > 1) {
    for (const DeviceBaseline& d : b.devices) {
      absl::StrAppend(&out, "  GPU ", d.device, ": utilization ", FormatPercent(d.utilization), ", ",
                      FormatDuration(d.kernel_ns), " kernel time, ", d.kernels, d.kernels == 1 ? " kernel\n" : " kernels\n");
    }
  }
  return out;
}

Table BaselineTable(const Baseline& b) {
  Table t;
  t.name = "baseline";
  t.title = "Baseline: timeline window, kernel time, GPU utilization (kernel busy / window), launch rate";
  t.columns = {{"Scope", ColumnType::kText},           {"Window (ns)", ColumnType::kInteger},
               {"Metric Collection (ns)", ColumnType::kInteger}, {"Kernel Time (ns)", ColumnType::kInteger},
               {"Kernel Busy (ns)", ColumnType::kInteger}, {"Utilization (%)", ColumnType::kPercent},
               {"Kernels", ColumnType::kInteger},       {"Launches/s", ColumnType::kDecimal}};
  auto pct = [](double share) { return absl::StrFormat("%.1f", 100.0 * share); };
  auto rate = [](double v) { return absl::StrFormat("%.1f", v); };
  t.rows.push_back({"all", absl::StrCat(b.wall_ns), absl::StrCat(b.metrics_ns), absl::StrCat(b.kernel_ns),
                    absl::StrCat(b.busy_ns), pct(b.utilization), absl::StrCat(b.kernels), rate(b.launches_per_second)});
  for (const DeviceBaseline& d : b.devices) {
    const double per_second =
        b.counted_ns > 0 ? static_cast<double>(d.kernels) / (static_cast<double>(b.counted_ns) * 1e-9) : 0;
    t.rows.push_back({absl::StrCat("GPU ", d.device), absl::StrCat(b.wall_ns), absl::StrCat(b.metrics_ns),
                      absl::StrCat(d.kernel_ns), absl::StrCat(d.busy_ns), pct(d.utilization), absl::StrCat(d.kernels),
                      rate(per_second)});
  }
  return t;
}

}  // namespace cuscope::analysis
