// launch.overhead: a device fed many short kernels with gaps between them comparable to their run
// time spends a large part of its time waiting for the next launch.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {

std::vector<Finding> LaunchOverheadRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  const core::Trace& trace = timeline.trace();
  const uint64_t short_ns = static_cast<uint64_t>(thresholds.short_kernel_us * 1000.0);
  const uint64_t gap_max_ns = static_cast<uint64_t>(thresholds.launch_gap_max_us * 1000.0);
  for (const DeviceTimeline& d : timeline.devices()) {
    if (d.kernel_count == 0 || static_cast<double>(d.kernel_count) < thresholds.launch_min_kernels) continue;
    std::vector<uint64_t> short_durations;
    std::vector<uint64_t> gaps_after_short;
    uint64_t gap_total = 0, graph_launched = 0;
    OffenderTally names("kernel");
    // The end of everything so far: a gap is time no operation covers, whatever its stream.
    uint64_t frontier = 0;
    bool previous_short = false;
    for (OpRef op : d.ops) {
      const Interval x = timeline.OpInterval(op);
      if (previous_short && x.begin > frontier && x.begin - frontier <= gap_max_ns) {
        gaps_after_short.push_back(x.begin - frontier);
        gap_total += x.begin - frontier;
      }
      frontier = std::max(frontier, x.end);
      previous_short = false;
      if (op.kind() != OpKind::kKernel) continue;
      const core::KernelRow& k = trace.kernels[op.index()];
      if (x.length() >= short_ns) continue;
      previous_short = true;
      short_durations.push_back(x.length());
      if (k.graph_id != 0) ++graph_launched;
      names.Add(timeline.KernelName(k), x.length());
    }
    const double short_share = static_cast<double>(short_durations.size()) / static_cast<double>(d.kernel_count);
    if (short_durations.empty() || short_share < thresholds.short_kernel_min_share) continue;
    const size_t short_count = short_durations.size();
    const uint64_t median_kernel = Median(std::move(short_durations));
    const size_t gap_count = gaps_after_short.size();
    const uint64_t median_gap = Median(std::move(gaps_after_short));
    // Gaps that a fused kernel or a graph would remove.
    if (gap_count == 0 ||
        static_cast<double>(median_gap) < thresholds.launch_gap_to_runtime_ratio * static_cast<double>(median_kernel)) {
      continue;
    }
    const double active_s = static_cast<double>(d.active.length()) / 1e9;
    const double launch_rate = active_s > 0 ? static_cast<double>(d.kernel_count) / active_s : 0;
    const double graph_share = static_cast<double>(graph_launched) / static_cast<double>(short_count);
    const bool from_graphs = graph_share >= thresholds.graph_launched_share;

    Finding f;
    f.rule_id = "launch.overhead";
    f.recoverable_ns = gap_total;
    f.severity = SeverityFor(gap_total, d.active.length(), thresholds);
    f.headline = absl::StrCat("GPU ", d.device, ": ", short_count, " short kernels (median ", FormatDuration(median_kernel),
                              ") separated by gaps of median ", FormatDuration(median_gap), "; ",
                              FormatDuration(gap_total), " lost between launches");
    f.Add("device", d.device, "id");
    f.Add("kernels", static_cast<double>(d.kernel_count), "count");
    f.Add("short_kernels", static_cast<double>(short_count), "count");
    f.Add("short_kernel_share", short_share, "ratio");
    f.Add("median_short_kernel_ns", static_cast<double>(median_kernel), "ns");
    f.Add("median_gap_ns", static_cast<double>(median_gap), "ns");
    f.Add("gap_total_ns", static_cast<double>(gap_total), "ns");
    f.Add("launch_rate_per_s", launch_rate, "1/s");
    f.Add("graph_launched_share", graph_share, "ratio");
    f.offenders = names.Top(5);
    f.spans.push_back(Span{d.active.begin, d.active.end, "device active span"});
    if (from_graphs) {
      f.recommendation = absl::StrCat(
          "These kernels already come from CUDA graphs (", FormatPercent(graph_share),
          "), so graphs will not help further: fuse neighbouring kernels (torch.compile, a hand-written fused "
          "kernel) or give each kernel more work.");
    } else {
      f.recommendation =
          "Fuse neighbouring small kernels, or capture the repeated launch sequence in a CUDA graph "
          "(cudaStreamBeginCapture / torch.cuda.graphs) so it is submitted with one launch.";
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace cuscope::analysis
