// gpu.idle: how much of its active span each device sat idle, and what the host was doing then.
//
// The active span runs from a device's first operation to its last: start-up before the first
// kernel and tear-down after the last are not the GPU waiting for work. Busy time is the union of
// kernels, copies and memsets on the device, so concurrent streams never count twice.
//
// Not every idle gap is the steady state's fault. Gaps before the first `idle_startup_ops_share`
// of the device's operations (an init kernel, then loading and building) are start-up, and gaps in
// which the host is mainly setting up (building or instantiating a CUDA graph, capturing a stream,
// loading modules) are setup, as are gaps the host spends in a graph's first launch: the first
// launch of a big graph still submits its nodes from the host (20,000 nodes took 39 ms on the H200)
// and a busy host lets the GPU run dry in the middle; later launches of the graph are counted. Both are reported, but left out of the recoverable time and of the
// span the severity is judged on, unless setup recurs (`idle_setup_recurring_gaps`).
//
// Nor is the short gap between two kernels of one CUDA graph launch: that is the GPU's own latency
// from one graph node to the next, which no host change removes (fusing the kernels does). It is
// reported too, and left out the same way.
//
// Metric collection is left out altogether: while CUPTI replays a launch for its counters (METRICS
// capture windows, and the profiled launch's call, in which the profiler is set up) the context is
// serialized for 100s of ms, and that idle time is the profiler's. It is removed from the gaps and
// from the active span the busy share is taken of. The replayed launches' measured duration is the
// program's work the timeline cannot place: it counts as busy.
//
// So is time outside the TIMELINE capture windows (a top-down's metrics phase after its window, the
// stretch between two cudaProfilerStart/Stop ranges): nothing was recorded there, so the GPU was
// not seen idle. It is left out the same way.
#include <algorithm>
#include <array>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

constexpr int kSetupCause = static_cast<int>(ApiCategory::kSetup);
constexpr int kHostBoundCause = kApiCategoryCount;
constexpr int kGraphNodeCause = kApiCategoryCount + 1;
constexpr int kCauseCount = kApiCategoryCount + 2;

constexpr std::array<absl::string_view, kCauseCount> kCauseKeys = {
    "idle_in_sync_ns",   "idle_in_copy_ns",      "idle_in_alloc_ns",  "idle_in_setup_ns",
    "idle_in_launch_ns", "idle_in_other_api_ns", "idle_host_bound_ns", "idle_between_graph_nodes_ns"};
constexpr std::array<absl::string_view, kCauseCount> kCauseNames = {
    "host in a synchronization call",
    "host in a memcpy/memset call",
    "host allocating or freeing memory",
    "host setting up (graph construction/instantiation, module load) or starting up",
    "host launching work",
    "host in another CUDA call",
    "host-bound (no CUDA call running)",
    "the GPU moving between the nodes of a CUDA graph"};
constexpr std::array<absl::string_view, kCauseCount> kCauseAdvice = {
    "remove synchronization points or replace them with events the GPU waits on, so the host keeps "
    "submitting work while the GPU runs",
    "make the copies asynchronous (pinned memory, cudaMemcpyAsync on their own stream)",
    "allocate once up front or use a caching/stream-ordered allocator (cudaMallocAsync) instead of "
    "allocating in the loop",
    "setup repeats during the run: build and instantiate CUDA graphs once and relaunch them (update "
    "parameters with cudaGraphExecUpdate), load modules once up front",
    "launches are the bottleneck: fuse small kernels or capture the sequence in a CUDA graph",
    "look at the other CUDA calls made between kernels",
    "the host is busy outside CUDA between submissions (framework overhead, Python, I/O): profile the "
    "host side, move work off the submitting thread, or queue more work ahead",
    "the GPU's own latency from one graph node to the next: fuse neighbouring kernels of the graph or give "
    "each more work"};

struct Gap {
  Interval span;
  int cause = kHostBoundCause;
};

// The three longest gaps seen so far, longest first.
void KeepLongest(std::array<Gap, 3>& longest, const Gap& gap) {
  for (size_t i = 0; i < longest.size(); ++i) {
    if (gap.span.length() > longest[i].span.length()) {
      for (size_t j = longest.size() - 1; j > i; --j) longest[j] = longest[j - 1];
      longest[i] = gap;
      return;
    }
  }
}

}  // namespace

std::vector<Finding> GpuIdleRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  std::optional<HostActivity> host;  // built only when some device is idle enough to explain
  for (const DeviceTimeline& d : timeline.devices()) {
    const uint64_t active_ns = d.counted_active_ns();
    const uint64_t metrics_ns = d.metrics_idle_ns();
    const uint64_t unobserved_ns = d.unobserved_idle_ns();
    if (active_ns == 0) continue;
    const uint64_t busy_ns = d.busy_ns();
    // Launches replayed for metrics ran the program's work too, for their measured duration, where
    // the timeline cannot show it: counted as busy, so that a run whose kernels were all profiled
    // is not called idle.
    const uint64_t replayed_ns = std::min(active_ns - std::min(active_ns, busy_ns), d.replayed_kernel_ns);
    const double busy_share = static_cast<double>(busy_ns + replayed_ns) / static_cast<double>(active_ns);
    if (busy_share >= thresholds.gpu_busy_min_share) continue;
    if (host) {
      host->Rewind();
    } else {
      host.emplace(timeline);
    }

    // Gaps ending at or before the start of this operation are start-up.
    const size_t startup_ops =
        static_cast<size_t>(static_cast<double>(d.ops.size()) * std::max(0.0, thresholds.idle_startup_ops_share));
    const uint64_t startup_end =
        startup_ops > 0 && startup_ops < d.ops.size() ? timeline.OpInterval(d.ops[startup_ops]).begin : 0;

    std::array<uint64_t, kCauseCount> cause_ns{};
    const uint64_t micro_gap_ns = static_cast<uint64_t>(thresholds.micro_gap_us * 1000.0);
    const uint64_t graph_gap_max_ns = static_cast<uint64_t>(thresholds.graph_node_gap_max_us * 1000.0);
    uint64_t gaps = 0, micro_gaps = 0, micro_gap_total = 0;
    uint64_t startup_idle = 0, setup_idle = 0, setup_gaps = 0, graph_node_idle = 0, graph_node_gaps = 0;
    std::array<Gap, 3> longest{};
    // The first launch of each CUDA graph: its correlation id (the first graph kernel's). That launch
    // uploads the graph to the device before its first node runs, one-off work like instantiation.
    absl::flat_hash_map<uint32_t, std::pair<uint64_t, uint64_t>> first_launch;  // graph -> (start, corr)
    for (OpRef op : d.ops) {
      if (op.kind() != OpKind::kKernel) continue;
      const core::KernelRow& k = timeline.trace().kernels[op.index()];
      if (k.graph_id == 0) continue;
      auto [it, inserted] = first_launch.try_emplace(k.graph_id, k.start, k.correlation_id);
      if (!inserted && k.start < it->second.first) it->second = {k.start, k.correlation_id};
    }
    // `before` ended last before the gap, `after` starts at its end (none for the tail gap).
    auto visit = [&](Interval gap, const OpRef* before, const OpRef* after) {
      if (gap.empty()) return;
      ++gaps;
      if (before && after && gap.length() < graph_gap_max_ns && before->kind() == OpKind::kKernel &&
          after->kind() == OpKind::kKernel) {
        const core::KernelRow& a = timeline.trace().kernels[before->index()];
        const core::KernelRow& b = timeline.trace().kernels[after->index()];
        // Kernels of one graph launch carry the correlation id of that cudaGraphLaunch.
        if (a.graph_id != 0 && b.graph_id != 0 && a.correlation_id != 0 && a.correlation_id == b.correlation_id) {
          ++graph_node_gaps;
          graph_node_idle += gap.length();
          cause_ns[kGraphNodeCause] += gap.length();
          KeepLongest(longest, Gap{gap, kGraphNodeCause});
          return;
        }
      }
      const auto by_category = host->Breakdown(gap);
      Gap g{gap, kHostBoundCause};
      if (gap.end <= startup_end) {
        startup_idle += gap.length();
        cause_ns[kSetupCause] += gap.length();
        g.cause = kSetupCause;
        KeepLongest(longest, g);
        return;
      }
      uint64_t explained = 0, dominant_ns = 0;
      int dominant = kHostBoundCause;
      for (int c = 0; c < kApiCategoryCount; ++c) {
        explained += by_category[c];
        if (by_category[c] > dominant_ns) {
          dominant_ns = by_category[c];
          dominant = c;
        }
      }
      // A gap the host spent launching, ended by the first node of a graph's first launch: the
      // graph's upload, setup rather than a launch rate the program keeps up.
      if (dominant == static_cast<int>(ApiCategory::kLaunch) && after && after->kind() == OpKind::kKernel) {
        const core::KernelRow& k = timeline.trace().kernels[after->index()];
        auto it = k.graph_id != 0 ? first_launch.find(k.graph_id) : first_launch.end();
        if (it != first_launch.end() && it->second.second == k.correlation_id) dominant = kSetupCause;
      }
      if (dominant == kSetupCause) {
        // The host was mainly setting up: the whole gap is setup, host work between the calls included.
        ++setup_gaps;
        setup_idle += gap.length();
        cause_ns[kSetupCause] += gap.length();
        g.cause = kSetupCause;
        KeepLongest(longest, g);
        return;
      }
      for (int c = 0; c < kApiCategoryCount; ++c) cause_ns[c] += by_category[c];
      const uint64_t unexplained = gap.length() - std::min(gap.length(), explained);
      cause_ns[kHostBoundCause] += unexplained;
      g.cause = unexplained >= dominant_ns ? kHostBoundCause : dominant;
      if (gap.length() < micro_gap_ns) {
        ++micro_gaps;
        micro_gap_total += gap.length();
      }
      KeepLongest(longest, g);
    };
    // A gap without its stretches inside METRICS windows or outside the capture windows: the pieces
    // left, in order. Gaps come in time order, so one cursor walks the windows once.
    const IntervalSet skip = d.NotCounted();
    size_t window = 0;
    auto visit_counted = [&](Interval gap, const OpRef* before, const OpRef* after) {
      while (window < skip.size() && skip[window].end <= gap.begin) ++window;
      uint64_t cursor = gap.begin;
      const OpRef* left = before;
      for (size_t w = window; w < skip.size() && skip[w].begin < gap.end; ++w) {
        if (skip[w].begin > cursor) visit({cursor, skip[w].begin}, left, nullptr);
        cursor = std::max(cursor, skip[w].end);
        left = nullptr;
      }
      if (cursor < gap.end) visit({cursor, gap.end}, left, after);
    };
    // The gaps of the busy set within the active span, with the operations on either side: the
    // operations in start order, against the latest end so far.
    uint64_t frontier = d.active.begin;
    const OpRef* frontier_op = nullptr;
    for (const OpRef& op : d.ops) {
      const Interval x = timeline.OpInterval(op);
      if (x.begin > frontier) visit_counted({frontier, x.begin}, frontier_op, &op);
      if (x.end >= frontier) {
        frontier = x.end;
        frontier_op = &op;
      }
    }
    if (d.active.end > frontier) visit_counted({frontier, d.active.end}, frontier_op, nullptr);

    // Utilization profile: buckets with little work show where in the run the GPU starved.
    // Buckets split the whole active span; metric-collection time inside a bucket is not counted.
    const uint64_t buckets = std::max<uint64_t>(1, static_cast<uint64_t>(thresholds.utilization_buckets));
    const uint64_t full_ns = d.active.length();
    uint64_t low_buckets = 0;
    Interval worst_bucket;
    double worst_share = 2.0;
    for (uint64_t b = 0; b < buckets; ++b) {
      const Interval bucket{d.active.begin + full_ns * b / buckets, d.active.begin + full_ns * (b + 1) / buckets};
      if (bucket.empty()) continue;
      const uint64_t counted = bucket.length() - std::min(bucket.length(), CoveredLength(skip, bucket));
      if (counted == 0) continue;
      const double share = static_cast<double>(CoveredLength(d.busy, bucket)) / static_cast<double>(counted);
      if (share < thresholds.utilization_low_share) ++low_buckets;
      if (share < worst_share) {
        worst_share = share;
        worst_bucket = bucket;
      }
    }

    const uint64_t idle_ns = active_ns - busy_ns - replayed_ns;
    // Setup is a steady-state cost only when it keeps coming back.
    const bool setup_recurs = static_cast<double>(setup_gaps) >= thresholds.idle_setup_recurring_gaps;
    const uint64_t setup_excluded = startup_idle + (setup_recurs ? 0 : setup_idle);
    const uint64_t excluded = std::min(idle_ns, setup_excluded + graph_node_idle);
    const uint64_t steady_idle = idle_ns - excluded;
    const uint64_t steady_span = active_ns - excluded;
    // The cause to act on: the largest one that counts.
    std::array<uint64_t, kCauseCount> counted = cause_ns;
    counted[kSetupCause] -= std::min(counted[kSetupCause], setup_excluded);
    counted[kGraphNodeCause] = 0;
    int top_cause = -1;
    for (int c = 0; c < kCauseCount; ++c) {
      if (counted[c] > 0 && (top_cause < 0 || counted[c] > counted[top_cause])) top_cause = c;
    }
    Finding f;
    f.rule_id = "gpu.idle";
    f.recoverable_ns = steady_idle;
    f.severity = SeverityFor(steady_idle, steady_span, thresholds);
    f.headline = absl::StrCat("GPU ", d.device, " idle ", FormatPercent(1.0 - busy_share), " of its active time (",
                              FormatDuration(idle_ns), " of ", FormatDuration(active_ns), ")");
    if (setup_excluded > 0) {
      absl::StrAppend(&f.headline, ", ", FormatDuration(setup_excluded), " of it one-off setup or start-up");
    }
    if (graph_node_idle > 0) {
      absl::StrAppend(&f.headline, ", ", FormatDuration(graph_node_idle), " of it between the nodes of CUDA graphs");
    }
    if (metrics_ns > 0) {
      absl::StrAppend(&f.headline, " (", FormatDuration(metrics_ns), " of metric collection left out)");
    }
    if (unobserved_ns > 0) {
      absl::StrAppend(&f.headline, " (", FormatDuration(unobserved_ns), " outside the capture windows left out)");
    }
    if (replayed_ns > 0) {
      absl::StrAppend(&f.headline, " (", FormatDuration(replayed_ns), " of kernels replayed for metrics counted busy)");
    }
    if (excluded > 0) {
      absl::StrAppend(&f.headline, "; steady state ", FormatDuration(steady_idle), " idle of ",
                      FormatDuration(steady_span));
    }
    if (top_cause >= 0) absl::StrAppend(&f.headline, "; mostly ", kCauseNames[top_cause]);
    f.Add("device", d.device, "id");
    f.Add("active_ns", static_cast<double>(active_ns), "ns");
    f.Add("busy_ns", static_cast<double>(busy_ns), "ns");
    f.Add("busy_share", busy_share, "ratio");
    f.Add("idle_ns", static_cast<double>(idle_ns), "ns");
    f.Add("steady_idle_ns", static_cast<double>(steady_idle), "ns");
    f.Add("steady_span_ns", static_cast<double>(steady_span), "ns");
    f.Add("startup_idle_ns", static_cast<double>(startup_idle), "ns");
    f.Add("setup_idle_ns", static_cast<double>(setup_idle), "ns");
    f.Add("setup_gaps", static_cast<double>(setup_gaps), "count");
    f.Add("graph_node_idle_ns", static_cast<double>(graph_node_idle), "ns");
    f.Add("graph_node_gaps", static_cast<double>(graph_node_gaps), "count");
    f.Add("metrics_collection_ns", static_cast<double>(metrics_ns), "ns");
    if (unobserved_ns > 0) f.Add("unobserved_ns", static_cast<double>(unobserved_ns), "ns");
    f.Add("replayed_kernel_ns", static_cast<double>(replayed_ns), "ns");
    f.Add("gaps", static_cast<double>(gaps), "count");
    f.Add("micro_gaps", static_cast<double>(micro_gaps), "count");
    f.Add("micro_gap_ns", static_cast<double>(micro_gap_total), "ns");
    for (int c = 0; c < kCauseCount; ++c) f.Add(std::string(kCauseKeys[c]), static_cast<double>(cause_ns[c]), "ns");
    f.Add("low_utilization_buckets", static_cast<double>(low_buckets), "count");
    f.Add("buckets", static_cast<double>(buckets), "count");
    for (int c = 0; c < kCauseCount; ++c) {
      if (cause_ns[c] > 0) f.offenders.push_back(Offender{"cause", std::string(kCauseNames[c]), 0, cause_ns[c]});
    }
    std::sort(f.offenders.begin(), f.offenders.end(),
              [](const Offender& a, const Offender& b) { return a.time_ns > b.time_ns; });
    for (const Gap& g : longest) {
      if (!g.span.empty()) f.spans.push_back(Span{g.span.begin, g.span.end, absl::StrCat("idle gap: ", kCauseNames[g.cause])});
    }
    if (!worst_bucket.empty()) {
      f.spans.push_back(Span{worst_bucket.begin, worst_bucket.end,
                             absl::StrCat("least busy bucket: ", FormatPercent(worst_share), " busy")});
    }
    if (top_cause >= 0) {
      f.recommendation = absl::StrCat("Most idle time that counts is ", kCauseNames[top_cause], ": ",
                                      kCauseAdvice[top_cause], ".");
    } else {
      f.recommendation =
          "The idle time is one-off setup, start-up or the GPU's own latency between graph nodes; "
          "the steady state keeps the host feeding the GPU.";
    }
    if (setup_excluded > 0) {
      absl::StrAppend(&f.recommendation, " ", FormatDuration(setup_excluded),
                      " of idle time is start-up or one-off setup (graph building, instantiation and first "
                      "launch, module loading, the wait before the first work): not counted as recoverable; "
                      "profile the steady "
                      "phase alone (--delay, or a cudaProfilerStart/Stop capture range) to see it without it.");
    }
    if (graph_node_gaps > 0) {
      absl::StrAppend(&f.recommendation, " ", graph_node_gaps, " gaps between kernels of the same CUDA graph launch (",
                      FormatDuration(graph_node_idle), ") are ", kCauseNames[kGraphNodeCause], ": ",
                      kCauseAdvice[kGraphNodeCause], "; not counted as recoverable by the host.");
    }
    if (metrics_ns > 0) {
      absl::StrAppend(&f.recommendation, " ", FormatDuration(metrics_ns),
                      " the GPU spent in metric collection (kernel replay) is left out of the idle time and of "
                      "the active span.");
    }
    if (unobserved_ns > 0) {
      absl::StrAppend(&f.recommendation, " ", FormatDuration(unobserved_ns),
                      " between or after the capture windows, while the timeline was off, is left out of the idle "
                      "time and of the active span: nothing was recorded there.");
    }
    if (replayed_ns > 0) {
      absl::StrAppend(&f.recommendation, " ", FormatDuration(replayed_ns),
                      " of kernels replayed for metrics cannot be placed on the timeline and is counted as busy; the "
                      "causes above are the measured gaps, without it.");
    }
    if (micro_gaps > 0) {
      absl::StrAppend(&f.recommendation, " ", micro_gaps, " gaps are shorter than ", thresholds.micro_gap_us,
                      " us (", FormatDuration(micro_gap_total), " in all): launch latency between short kernels.");
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace cuscope::analysis
