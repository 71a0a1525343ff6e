#include "lib/report/run_figures.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/core/kernel_names.h"
#include "lib/core/kernel_selection.h"

namespace cuscope::report {

const FindingFigure* RunFigures::top_finding() const {
  for (const FindingFigure& f : findings) {
    if (f.severity >= analysis::Severity::kWarning) return &f;
  }
  return nullptr;
}

RunFigures FiguresOf(const analysis::Timeline& timeline, const analysis::Analysis& analysis, std::string label) {
  const core::Trace& trace = timeline.trace();
  RunFigures r;
  r.label = std::move(label);
  const v1::TraceSummary& s = analysis.summary;
  r.end_to_end_ns = s.span_ns();
  r.truncated = s.truncated();
  for (const v1::DeviceSummary& d : s.devices()) {
    r.gpu_busy_ns += d.busy_ns() + d.replayed_busy_ns();  // as the GPU lines and gpu.idle count it
    // Metric collection and idle time outside the capture windows are neither busy nor idle.
    r.gpu_active_ns += d.counted_active_ns();
    r.kernel_count += d.kernels();
    r.kernel_time_ns += d.kernel_time_ns();
  }
  r.gpu_busy_share = r.gpu_active_ns ? static_cast<double>(r.gpu_busy_ns) / static_cast<double>(r.gpu_active_ns) : 0;

  // Steady state: each device's (analysis::SteadyStateOf, as gpu.idle judges it).
  const double startup_share = analysis::Thresholds().idle_startup_ops_share;
  uint64_t steady_begin = UINT64_MAX, steady_end = 0;
  uint64_t steady_busy = 0, steady_counted = 0;
  std::optional<intervals::IntervalSet> counted_nowhere;  // time no device counts
  for (const analysis::DeviceTimeline& d : timeline.devices()) {
    if (d.ops.empty()) continue;
    const analysis::SteadyState steady = analysis::SteadyStateOf(timeline, d, startup_share);
    steady_begin = std::min(steady_begin, steady.span.begin);
    steady_end = std::max(steady_end, steady.span.end);
    steady_busy += steady.busy_ns;
    steady_counted += steady.counted_ns;
    counted_nowhere = counted_nowhere ? intervals::Intersect(*counted_nowhere, d.NotCounted()) : d.NotCounted();
  }
  // The run's steady state, as the devices' spans together less what none of them counts (metric
  // collection, time outside the capture windows): for one device, gpu.idle's steady state.
  if (steady_end > steady_begin) {
    const intervals::Interval span{steady_begin, steady_end};
    r.steady_ns = span.length() - std::min(span.length(), intervals::CoveredLength(*counted_nowhere, span));
  }
  r.steady_gpu_active_ns = steady_counted;
  r.steady_gpu_busy_share =
      steady_counted ? std::min(1.0, static_cast<double>(steady_busy) / static_cast<double>(steady_counted)) : 0;
  for (const analysis::ThreadTimeline& thread : timeline.threads()) {
    for (const analysis::NvtxRange& range : thread.ranges) {
      NvtxFigure& f = r.nvtx[range.name != 0 && range.name <= trace.dict.string_count() ? trace.dict.str(range.name)
                                                                                         : std::string()];
      ++f.count;
      f.total_ns += range.end - range.begin;
    }
  }

  // Kernel time by name, over the launches on the timeline (replayed ones are the profiler's).
  absl::flat_hash_map<uint32_t, size_t> slot_of_signature;
  absl::flat_hash_map<std::string_view, size_t> slot_of_name;
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k)) continue;
    auto [it, inserted] = slot_of_signature.try_emplace(k.signature, 0);
    if (inserted) {
      const std::string_view name = timeline.KernelName(k);
      auto [nit, new_name] = slot_of_name.try_emplace(name, r.kernels.size());
      if (new_name) r.kernels.push_back(KernelFigure{std::string(name), core::ShortKernelName(name), 0, 0});
      it->second = nit->second;
    }
    KernelFigure& f = r.kernels[it->second];
    ++f.count;
    f.total_ns += k.end > k.start ? k.end - k.start : 0;
  }
  std::sort(r.kernels.begin(), r.kernels.end(), [](const KernelFigure& a, const KernelFigure& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  for (const analysis::Finding& f : analysis.findings) {
    r.findings.push_back(FindingFigure{f.rule_id, f.severity, f.headline, f.recoverable_ns});
  }
  return r;
}

absl::StatusOr<RunFigures> LoadRunFigures(const std::string& path) {
  absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
  if (!trace.ok()) return trace.status();  // names the path already
  analysis::AnalyzeOptions options;
  options.include_tables = false;
  const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
  const analysis::Analysis result = analysis::Analyze(timeline, options);
  return FiguresOf(timeline, result, path);
}

}  // namespace cuscope::report
