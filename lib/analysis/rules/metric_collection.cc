// metric collection: what profiling kernels for their counters did to the timeline. Replayed
// launches are left out of it, the replay windows and the profiled launch calls are neither busy
// nor idle time, and a run whose kernel time is mostly in replayed launches describes the profiled
// run rather than the program's own.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

// Metric collection while the timeline was recorded: in a top-down trace it all runs after the
// window, and the top-down section says so instead. Empty when there was none.
std::vector<std::string> CapturedMetricCollection(const Timeline& timeline) {
  const IntervalSet captured_metrics = timeline.has_capture_windows()
                                           ? Intersect(timeline.metric_windows(), timeline.capture_windows())
                                           : timeline.metric_windows();
  if (captured_metrics.empty()) return {};
  uint64_t windows = timeline.metric_window_count();
  if (timeline.has_capture_windows()) {
    windows = 0;
    for (const v1::CaptureWindow& w : timeline.trace().windows) {
      if (w.kind() == v1::WINDOW_KIND_METRICS && timeline.Captured(w.start_ns())) ++windows;
    }
  }
  return {absl::StrCat(
      "metric collection took ", FormatDuration(TotalLength(captured_metrics)), " (", windows,
      windows == 1 ? " replay window" : " replay windows",
      " and the launch calls of the profiled launches): that time is left out of GPU idle time and busy share; "
      "the profiled launch calls and any host call spanning them last longer than without profiling")};
}

}  // namespace

std::vector<std::string> MetricCollectionRule(const Timeline& timeline) {
  std::vector<std::string> warnings;
  if (timeline.replayed_kernel_count() > 0) {
    warnings.push_back(absl::StrCat(timeline.replayed_kernel_count(),
                                    " replayed launches (metric collection) are left out of the timeline"));
  }
  for (std::string& w : CapturedMetricCollection(timeline)) warnings.push_back(std::move(w));
  for (const DeviceTimeline& d : timeline.devices()) {
    if (d.replayed_kernel_ns > 0 && d.replayed_kernel_ns >= d.kernel_time_ns) {
      warnings.push_back(absl::StrCat(
          "most of GPU ", d.device, "'s kernel time (", FormatDuration(d.replayed_kernel_ns), " of ",
          FormatDuration(d.replayed_kernel_ns + d.kernel_time_ns),
          ") is in launches replayed for metrics, which the timeline cannot place: the timeline findings describe "
          "the profiled run; profile without --metrics, or profile fewer launches (--launch-skip, --launch-count), "
          "for the program's own timeline"));
    }
  }
  return warnings;
}

}  // namespace cuscope::analysis
