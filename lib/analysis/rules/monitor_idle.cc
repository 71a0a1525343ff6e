// monitor.gpu_idle: in a monitor-mode trace, a device busy less than gpu_busy_min_share of the
// monitored time, with what the host was doing while it idled. The figures are interval sums, so
// the finding names no single gap; its recoverable time is the idle time the host's CUDA calls or
// its own work explain, an upper bound.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/monitor_summary.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

const char* Advice(core::HostCause cause) {
  switch (cause) {
    case core::HostCause::kSync:
      return "The host waits for the GPU and the GPU then waits for the host: synchronize less often (keep "
             "results on the GPU, read them back in batches) so that work stays queued.";
    case core::HostCause::kCopy:
      return "Synchronous copies hold the GPU idle: copy from pinned memory with cudaMemcpyAsync on a stream "
             "of its own, overlapping the kernels.";
    case core::HostCause::kAlloc:
      return "Allocations and frees in the serving loop stall the device: allocate once (a caching "
             "allocator) or use cudaMallocAsync/cudaFreeAsync.";
    case core::HostCause::kSetup:
      return "Set-up work (graph instantiation, module loading, stream capture) recurs while serving: build "
             "it once and reuse it.";
    case core::HostCause::kLaunch:
      return "The GPU waits on kernel launches: fewer, larger kernels (fusion, batching) or CUDA graphs.";
    case core::HostCause::kOutsideCuda:
      break;
  }
  return "The host is busy outside CUDA (its own computation, request handling, data loading, or a CUDA "
         "call lean collection leaves out) while the GPU idles: batch more work per request, move host work "
         "off the launching threads, or profile the host side; a trace window (Session::BeginTraceWindow) "
         "shows the gaps one by one.";
}

}  // namespace

std::vector<Finding> MonitorIdleRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> out;
  const MonitorSummary m = SummarizeMonitor(timeline.trace());
  for (const MonitorDeviceSummary& d : m.devices) {
    if (d.span_ns == 0 || d.kernels == 0) continue;  // a device that never ran a kernel is not in use
    const double busy = static_cast<double>(d.busy_ns) / static_cast<double>(d.span_ns);
    if (busy >= thresholds.gpu_busy_min_share) continue;
    const auto dominant =
        static_cast<int>(std::max_element(d.idle_by_cause_ns.begin(), d.idle_by_cause_ns.end()) - d.idle_by_cause_ns.begin());
    const auto cause = static_cast<core::HostCause>(dominant);
    const double cause_share =
        d.idle_ns > 0 ? static_cast<double>(d.idle_by_cause_ns[dominant]) / static_cast<double>(d.idle_ns) : 0;
    Finding f;
    f.rule_id = "monitor.gpu_idle";
    f.recoverable_ns = d.idle_ns;
    f.severity = SeverityFor(f.recoverable_ns, d.span_ns, thresholds);
    f.headline = absl::StrFormat(
        "GPU %u idle %.1f%% of %.1f s monitored from its first operation (busy %.1f%%); while it idled the host "
        "was mostly %s (%.0f%% of the idle time)",
        d.device, 100.0 * static_cast<double>(d.idle_ns) / static_cast<double>(d.span_ns),
        static_cast<double>(d.span_ns) / 1e9, 100.0 * busy,
        cause == core::HostCause::kOutsideCuda ? std::string("outside CUDA")
                                                  : absl::StrCat("in ", core::HostCauseName(cause), " calls"),
        100.0 * cause_share);
    f.Add("busy_share", busy, "ratio");
    f.Add("idle_ns", static_cast<double>(d.idle_ns), "ns");
    for (int c = 0; c < core::kHostCauseCount; ++c) {
      f.Add(absl::StrCat("idle_", core::HostCauseName(static_cast<core::HostCause>(c)), "_ns"),
            static_cast<double>(d.idle_by_cause_ns[c]), "ns");
    }
    f.Add("intervals", static_cast<double>(d.intervals), "count");
    f.recommendation = Advice(cause);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace cuscope::analysis
