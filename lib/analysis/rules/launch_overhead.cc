// launch.overhead: a device fed many short kernels with gaps between them comparable to their run
// time spends a large part of its time waiting for the next launch.
//
// With queue times (when the host queued each launch into the command buffer) the finding also
// says whose gaps they are: a gap whose next kernel was queued only after the GPU had gone idle is
// the host's (it launched too late); one whose next kernel was already queued is the GPU's own
// latency in picking work up.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

// Durations and gaps of short kernels fit in 32 bits (the thresholds keep them to microseconds);
// one buffer holds first the one, then the other, for their medians.
uint32_t Clamp32(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)); }

// Per kernel signature: (count, time) of its short launches, named only at the end.
using BySignature = std::vector<std::pair<uint64_t, uint64_t>>;

// One device's short kernels and the gaps after them.
struct ShortKernels {
  uint64_t gap_total = 0, gap_count = 0, graph_launched = 0, unknown_count = 0, unknown_time = 0;
  // Gaps whose next kernel has a queue time, and of those the ones it was queued after the GPU
  // went idle; the queue leads (start - queued) of the short kernels.
  uint64_t queued_gaps = 0, queued_after_idle = 0;
  std::vector<uint32_t> leads;
  size_t short_count = 0;
  double short_share = 0;
  uint64_t median_kernel = 0;
  uint64_t median_gap = 0;
};

// The end of everything so far: a gap is time no operation covers, whatever its stream.
// `on_gap` sees each gap that follows a short kernel, the operation that ends it and the time
// the GPU went idle.
template <typename OnShort, typename OnGap>
void WalkShortKernels(const Timeline& timeline, const DeviceTimeline& d, uint64_t short_ns, uint64_t gap_max_ns,
                      OnShort&& on_short, OnGap&& on_gap) {
  const core::Trace& trace = timeline.trace();
  uint64_t frontier = 0;
  bool previous_short = false;
  for (OpRef op : d.ops) {
    const Interval x = timeline.OpInterval(op);
    if (previous_short && x.begin > frontier && x.begin - frontier <= gap_max_ns) {
      on_gap(x.begin - frontier, op, frontier);
    }
    frontier = std::max(frontier, x.end);
    previous_short = false;
    if (op.kind() != OpKind::kKernel || x.length() >= short_ns) continue;
    previous_short = true;
    on_short(trace.kernels[op.index()], x.length());
  }
}

// The first walk: counts and sums, with the short kernels' durations left in `values` and their
// launches in `by_signature` (both buffers the caller reuses across devices).
ShortKernels TallyShortKernels(const Timeline& timeline, const DeviceTimeline& d, uint64_t short_ns,
                               uint64_t gap_max_ns, BySignature& by_signature, std::vector<uint32_t>& values) {
  const core::Trace& trace = timeline.trace();
  ShortKernels s;
  WalkShortKernels(
      timeline, d, short_ns, gap_max_ns,
      [&](const core::KernelRow& k, uint64_t length) {
        values.push_back(Clamp32(length));
        if (k.graph_id != 0) ++s.graph_launched;
        if (k.queued != 0 && k.queued <= k.start) s.leads.push_back(Clamp32(k.start - k.queued));
        if (k.signature > 0 && k.signature < by_signature.size()) {
          ++by_signature[k.signature].first;
          by_signature[k.signature].second += length;
        } else {
          ++s.unknown_count;
          s.unknown_time += length;
        }
      },
      [&](uint64_t gap, OpRef next, uint64_t idle_since) {
        s.gap_total += gap;
        ++s.gap_count;
        if (next.kind() != OpKind::kKernel) return;
        const core::KernelRow& k = trace.kernels[next.index()];
        if (k.queued == 0) return;
        ++s.queued_gaps;
        if (k.queued >= idle_since) ++s.queued_after_idle;
      });
  return s;
}

// The host's share of the gaps, when the kernels carry queue times: it decides whether launching
// earlier or launching fewer kernels is the fix.
std::string WhoseGaps(double after_idle) {
  if (after_idle >= 0.5) {
    return absl::StrCat("The host sets the pace: in ", FormatPercent(after_idle),
                        " of these gaps it queued the next kernel only after the GPU had gone idle. ");
  }
  return absl::StrCat("In ", FormatPercent(1.0 - after_idle),
                      " of these gaps the next kernel was already queued: they are the GPU's own "
                      "latency in starting each kernel, which only fewer, larger kernels remove. ");
}

Finding LaunchFinding(const Timeline& timeline, const DeviceTimeline& d, ShortKernels& s,
                      const BySignature& by_signature, const Thresholds& thresholds) {
  const core::Trace& trace = timeline.trace();
  OffenderTally names("kernel");
  for (uint32_t sig = 1; sig < by_signature.size(); ++sig) {
    if (by_signature[sig].first > 0) {
      names.Add(trace.dict.kernel_name(sig), by_signature[sig].second, by_signature[sig].first);
    }
  }
  if (s.unknown_count > 0) names.Add("(unknown kernel)", s.unknown_time, s.unknown_count);
  const double active_s = static_cast<double>(d.active.length()) / 1e9;
  const double launch_rate = active_s > 0 ? static_cast<double>(d.kernel_count) / active_s : 0;
  const double graph_share = static_cast<double>(s.graph_launched) / static_cast<double>(s.short_count);
  const bool from_graphs = graph_share >= thresholds.graph_launched_share;

  Finding f;
  f.rule_id = "launch.overhead";
  f.recoverable_ns = s.gap_total;
  f.severity = SeverityFor(s.gap_total, d.active.length(), thresholds);
  f.headline = absl::StrCat("GPU ", d.device, ": ", s.short_count, " short kernels (median ",
                            FormatDuration(s.median_kernel), ") separated by gaps of median ",
                            FormatDuration(s.median_gap), "; ", FormatDuration(s.gap_total), " lost between launches");
  f.Add("device", d.device, "id");
  f.Add("kernels", static_cast<double>(d.kernel_count), "count");
  f.Add("short_kernels", static_cast<double>(s.short_count), "count");
  f.Add("short_kernel_share", s.short_share, "ratio");
  f.Add("median_short_kernel_ns", static_cast<double>(s.median_kernel), "ns");
  f.Add("median_gap_ns", static_cast<double>(s.median_gap), "ns");
  f.Add("gap_total_ns", static_cast<double>(s.gap_total), "ns");
  f.Add("launch_rate_per_s", launch_rate, "1/s");
  f.Add("graph_launched_share", graph_share, "ratio");
  std::string whose_gaps;
  if (s.queued_gaps > 0) {
    const double after_idle = static_cast<double>(s.queued_after_idle) / static_cast<double>(s.queued_gaps);
    f.Add("gaps_with_queue_time", static_cast<double>(s.queued_gaps), "count");
    f.Add("queued_after_idle_share", after_idle, "ratio");
    if (!s.leads.empty()) f.Add("median_queue_lead_ns", static_cast<double>(Median(s.leads)), "ns");
    whose_gaps = WhoseGaps(after_idle);
  }
  f.offenders = names.Top(5);
  f.spans.push_back(Span{d.active.begin, d.active.end, "device active span"});
  if (from_graphs) {
    f.recommendation = absl::StrCat(
        whose_gaps, "These kernels already come from CUDA graphs (", FormatPercent(graph_share),
        "), so graphs will not help further: fuse neighbouring kernels (torch.compile, a hand-written fused "
        "kernel) or give each kernel more work.");
  } else {
    f.recommendation = absl::StrCat(
        whose_gaps,
        "Fuse neighbouring small kernels, or capture the repeated launch sequence in a CUDA graph "
        "(cudaStreamBeginCapture / torch.cuda.graphs) so it is submitted with one launch.");
  }
  return f;
}

}  // namespace

std::vector<Finding> LaunchOverheadRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  const core::Trace& trace = timeline.trace();
  const uint64_t short_ns = static_cast<uint64_t>(thresholds.short_kernel_us * 1000.0);
  const uint64_t gap_max_ns = static_cast<uint64_t>(thresholds.launch_gap_max_us * 1000.0);
  std::vector<uint32_t> values;
  BySignature by_signature(trace.dict.signature_count() + 1);
  for (const DeviceTimeline& d : timeline.devices()) {
    if (d.kernel_count == 0 || static_cast<double>(d.kernel_count) < thresholds.launch_min_kernels) continue;
    std::fill(by_signature.begin(), by_signature.end(), std::pair<uint64_t, uint64_t>{0, 0});
    values.clear();
    values.reserve(d.kernel_count);
    ShortKernels s = TallyShortKernels(timeline, d, short_ns, gap_max_ns, by_signature, values);
    s.short_count = values.size();
    s.short_share = static_cast<double>(s.short_count) / static_cast<double>(d.kernel_count);
    if (s.short_count == 0 || s.short_share < thresholds.short_kernel_min_share || s.gap_count == 0) continue;
    s.median_kernel = Median(values);
    values.clear();
    values.reserve(s.gap_count);
    WalkShortKernels(timeline, d, short_ns, gap_max_ns, [](const core::KernelRow&, uint64_t) {},
                     [&](uint64_t gap, OpRef, uint64_t) { values.push_back(Clamp32(gap)); });
    s.median_gap = Median(values);
    // Gaps that a fused kernel or a graph would remove.
    if (static_cast<double>(s.median_gap) <
        thresholds.launch_gap_to_runtime_ratio * static_cast<double>(s.median_kernel)) {
      continue;
    }
    findings.push_back(LaunchFinding(timeline, d, s, by_signature, thresholds));
  }
  return findings;
}

}  // namespace cuscope::analysis
