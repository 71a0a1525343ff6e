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
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

constexpr int kSetupCause = static_cast<int>(core::ApiCategory::kSetup);
constexpr int kHostBoundCause = core::kApiCategoryCount;
constexpr int kGraphNodeCause = core::kApiCategoryCount + 1;
constexpr int kCauseCount = core::kApiCategoryCount + 2;

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

// Where a device's idle gaps went, by cause, and the counts the finding reports.
struct GapTally {
  std::array<uint64_t, kCauseCount> cause_ns{};
  uint64_t gaps = 0, micro_gaps = 0, micro_gap_total = 0;
  uint64_t startup_idle = 0, setup_idle = 0, setup_gaps = 0, graph_node_idle = 0, graph_node_gaps = 0;
  std::array<Gap, 3> longest{};
};

// Walks the idle gaps of one device in time order and attributes each to a cause: the GPU's own
// latency between graph nodes, start-up, setup, or what the host was doing (HostActivity).
class GapAttribution {
 public:
  // `skip`: the device's time that is not counted (DeviceTimeline::NotCounted).
  GapAttribution(const Timeline& timeline, const DeviceTimeline& d, const IntervalSet& skip,
                 const Thresholds& thresholds, HostActivity& host)
      : timeline_(timeline),
        device_(d),
        host_(host),
        skip_(skip),
        micro_gap_ns_(static_cast<uint64_t>(thresholds.micro_gap_us * 1000.0)),
        graph_gap_max_ns_(static_cast<uint64_t>(thresholds.graph_node_gap_max_us * 1000.0)),
        startup_end_(SteadyStateOf(timeline, d, thresholds.idle_startup_ops_share).span.begin),
        first_launch_(FirstGraphLaunches(timeline, d)) {}

  // The gaps of the busy set within the active span, with the operations on either side: the
  // operations in start order, against the latest end so far.
  GapTally Run() {
    uint64_t frontier = device_.active.begin;
    const OpRef* frontier_op = nullptr;
    for (const OpRef& op : device_.ops) {
      const Interval x = timeline_.OpInterval(op);
      if (x.begin > frontier) VisitCounted({frontier, x.begin}, frontier_op, &op);
      if (x.end >= frontier) {
        frontier = x.end;
        frontier_op = &op;
      }
    }
    if (device_.active.end > frontier) VisitCounted({frontier, device_.active.end}, frontier_op, nullptr);
    return tally_;
  }

 private:
  // The first launch of each CUDA graph: graph -> (start, correlation id of its first kernel). That
  // launch uploads the graph to the device before its first node runs, one-off work like
  // instantiation.
  static absl::flat_hash_map<uint32_t, std::pair<uint64_t, uint64_t>> FirstGraphLaunches(const Timeline& timeline,
                                                                                        const DeviceTimeline& d) {
    absl::flat_hash_map<uint32_t, std::pair<uint64_t, uint64_t>> first_launch;
    for (OpRef op : d.ops) {
      if (op.kind() != OpKind::kKernel) continue;
      const core::KernelRow& k = timeline.trace().kernels[op.index()];
      if (k.graph_id == 0) continue;
      auto [it, inserted] = first_launch.try_emplace(k.graph_id, k.start, k.correlation_id);
      if (!inserted && k.start < it->second.first) it->second = {k.start, k.correlation_id};
    }
    return first_launch;
  }

  // A gap without its stretches inside METRICS windows or outside the capture windows: the pieces
  // left, in order. Gaps come in time order, so one cursor walks the windows once.
  void VisitCounted(Interval gap, const OpRef* before, const OpRef* after) {
    while (window_ < skip_.size() && skip_[window_].end <= gap.begin) ++window_;
    uint64_t cursor = gap.begin;
    const OpRef* left = before;
    for (size_t w = window_; w < skip_.size() && skip_[w].begin < gap.end; ++w) {
      if (skip_[w].begin > cursor) Visit({cursor, skip_[w].begin}, left, nullptr);
      cursor = std::max(cursor, skip_[w].end);
      left = nullptr;
    }
    if (cursor < gap.end) Visit({cursor, gap.end}, left, after);
  }

  // Whether a short gap lies between two kernels of one graph launch: kernels of one launch carry
  // the correlation id of that cudaGraphLaunch.
  bool BetweenNodesOfOneGraphLaunch(Interval gap, const OpRef* before, const OpRef* after) const {
    if (!before || !after || gap.length() >= graph_gap_max_ns_ || before->kind() != OpKind::kKernel ||
        after->kind() != OpKind::kKernel) {
      return false;
    }
    const core::KernelRow& a = timeline_.trace().kernels[before->index()];
    const core::KernelRow& b = timeline_.trace().kernels[after->index()];
    return a.graph_id != 0 && b.graph_id != 0 && a.correlation_id != 0 && a.correlation_id == b.correlation_id;
  }

  // Whether the gap is ended by the first node of a graph's first launch.
  bool EndsAtAGraphsFirstLaunch(const OpRef* after) const {
    if (!after || after->kind() != OpKind::kKernel) return false;
    const core::KernelRow& k = timeline_.trace().kernels[after->index()];
    auto it = k.graph_id != 0 ? first_launch_.find(k.graph_id) : first_launch_.end();
    return it != first_launch_.end() && it->second.second == k.correlation_id;
  }

  // The whole gap goes to one cause (graph nodes, start-up, setup).
  void AttributeWhole(Interval gap, int cause) {
    tally_.cause_ns[cause] += gap.length();
    KeepLongest(tally_.longest, Gap{gap, cause});
  }

  // `before` ended last before the gap, `after` starts at its end (none for the tail gap).
  void Visit(Interval gap, const OpRef* before, const OpRef* after) {
    if (gap.empty()) return;
    ++tally_.gaps;
    if (BetweenNodesOfOneGraphLaunch(gap, before, after)) {
      ++tally_.graph_node_gaps;
      tally_.graph_node_idle += gap.length();
      AttributeWhole(gap, kGraphNodeCause);
      return;
    }
    const auto by_category = host_.Breakdown(gap);
    if (gap.end <= startup_end_) {
      tally_.startup_idle += gap.length();
      AttributeWhole(gap, kSetupCause);
      return;
    }
    uint64_t explained = 0, dominant_ns = 0;
    int dominant = kHostBoundCause;
    for (int c = 0; c < core::kApiCategoryCount; ++c) {
      explained += by_category[c];
      if (by_category[c] > dominant_ns) {
        dominant_ns = by_category[c];
        dominant = c;
      }
    }
    // A gap the host spent launching, ended by the first node of a graph's first launch: the
    // graph's upload, setup rather than a launch rate the program keeps up.
    if (dominant == static_cast<int>(core::ApiCategory::kLaunch) && EndsAtAGraphsFirstLaunch(after)) dominant = kSetupCause;
    if (dominant == kSetupCause) {
      // The host was mainly setting up: the whole gap is setup, host work between the calls included.
      ++tally_.setup_gaps;
      tally_.setup_idle += gap.length();
      AttributeWhole(gap, kSetupCause);
      return;
    }
    for (int c = 0; c < core::kApiCategoryCount; ++c) tally_.cause_ns[c] += by_category[c];
    const uint64_t unexplained = gap.length() - std::min(gap.length(), explained);
    tally_.cause_ns[kHostBoundCause] += unexplained;
    if (gap.length() < micro_gap_ns_) {
      ++tally_.micro_gaps;
      tally_.micro_gap_total += gap.length();
    }
    KeepLongest(tally_.longest, Gap{gap, unexplained >= dominant_ns ? kHostBoundCause : dominant});
  }

  const Timeline& timeline_;
  const DeviceTimeline& device_;
  HostActivity& host_;
  const IntervalSet& skip_;
  size_t window_ = 0;  // the first window of skip_ that may still cut a gap
  const uint64_t micro_gap_ns_;
  const uint64_t graph_gap_max_ns_;
  const uint64_t startup_end_;  // the steady state's start (SteadyStateOf): gaps ending by it are start-up
  const absl::flat_hash_map<uint32_t, std::pair<uint64_t, uint64_t>> first_launch_;
  GapTally tally_;
};

// Utilization profile: buckets with little work show where in the run the GPU starved. Buckets
// split the whole active span; metric-collection time inside a bucket is not counted.
struct UtilizationProfile {
  uint64_t buckets = 0;
  uint64_t low_buckets = 0;
  Interval worst_bucket;
  double worst_share = 2.0;
};

UtilizationProfile ProfileUtilization(const DeviceTimeline& d, const IntervalSet& skip, const Thresholds& thresholds) {
  UtilizationProfile p;
  p.buckets = std::max<uint64_t>(1, static_cast<uint64_t>(thresholds.utilization_buckets));
  const uint64_t full_ns = d.active.length();
  for (uint64_t b = 0; b < p.buckets; ++b) {
    const Interval bucket{d.active.begin + full_ns * b / p.buckets, d.active.begin + full_ns * (b + 1) / p.buckets};
    if (bucket.empty()) continue;
    const uint64_t counted = bucket.length() - std::min(bucket.length(), CoveredLength(skip, bucket));
    if (counted == 0) continue;
    const double share = static_cast<double>(CoveredLength(d.busy, bucket)) / static_cast<double>(counted);
    if (share < thresholds.utilization_low_share) ++p.low_buckets;
    if (share < p.worst_share) {
      p.worst_share = share;
      p.worst_bucket = bucket;
    }
  }
  return p;
}

// A device's busy and idle time, what of the idle time is left out of the steady state, and the
// cause to act on.
struct IdleFigures {
  uint64_t active_ns = 0, busy_ns = 0, replayed_ns = 0, metrics_ns = 0, unobserved_ns = 0;
  double busy_share = 0;
  uint64_t idle_ns = 0;
  uint64_t setup_excluded = 0;  // start-up, and setup unless it recurs
  uint64_t excluded = 0;        // setup_excluded and the gaps between graph nodes
  // Idle time that counts, and the steady state it is judged on (SteadyStateOf's counted time: the
  // figure `diff` and the report compare).
  uint64_t steady_idle = 0, steady_span = 0;
  int top_cause = -1;  // none when all idle time is left out
};

// The device's figures completed with what of its idle time counts.
IdleFigures CountedIdle(const IdleFigures& device, const SteadyState& steady, const GapTally& tally,
                        const Thresholds& thresholds) {
  IdleFigures f = device;
  f.idle_ns = f.active_ns - f.busy_ns - f.replayed_ns;
  // Setup is a steady-state cost only when it keeps coming back.
  const bool setup_recurs = static_cast<double>(tally.setup_gaps) >= thresholds.idle_setup_recurring_gaps;
  f.setup_excluded = tally.startup_idle + (setup_recurs ? 0 : tally.setup_idle);
  f.excluded = std::min(f.idle_ns, f.setup_excluded + tally.graph_node_idle);
  f.steady_idle = f.idle_ns - f.excluded;
  // Start-up gaps end before the steady state: the idle time that counts lies inside it.
  f.steady_span = std::max(steady.counted_ns, f.steady_idle);
  // The cause to act on: the largest one that counts.
  std::array<uint64_t, kCauseCount> counted = tally.cause_ns;
  counted[kSetupCause] -= std::min(counted[kSetupCause], f.setup_excluded);
  counted[kGraphNodeCause] = 0;
  for (int c = 0; c < kCauseCount; ++c) {
    if (counted[c] > 0 && (f.top_cause < 0 || counted[c] > counted[f.top_cause])) f.top_cause = c;
  }
  return f;
}

std::string IdleHeadline(uint32_t device, const IdleFigures& f, const GapTally& tally) {
  std::string headline = absl::StrCat("GPU ", device, " idle ", FormatPercent(1.0 - f.busy_share),
                                      " of its active time (", FormatDuration(f.idle_ns), " of ",
                                      FormatDuration(f.active_ns), ")");
  if (f.setup_excluded > 0) {
    absl::StrAppend(&headline, ", ", FormatDuration(f.setup_excluded), " of it one-off setup or start-up");
  }
  if (tally.graph_node_idle > 0) {
    absl::StrAppend(&headline, ", ", FormatDuration(tally.graph_node_idle), " of it between the nodes of CUDA graphs");
  }
  if (f.metrics_ns > 0) {
    absl::StrAppend(&headline, " (", FormatDuration(f.metrics_ns), " of metric collection left out)");
  }
  if (f.unobserved_ns > 0) {
    absl::StrAppend(&headline, " (", FormatDuration(f.unobserved_ns), " outside the capture windows left out)");
  }
  if (f.replayed_ns > 0) {
    absl::StrAppend(&headline, " (", FormatDuration(f.replayed_ns), " of kernels replayed for metrics counted busy)");
  }
  if (f.excluded > 0) {
    absl::StrAppend(&headline, "; steady state ", FormatDuration(f.steady_idle), " idle of ",
                    FormatDuration(f.steady_span));
  }
  if (f.top_cause >= 0) absl::StrAppend(&headline, "; mostly ", kCauseNames[f.top_cause]);
  return headline;
}

void AddIdleNumbers(uint32_t device, const IdleFigures& f, const GapTally& tally, const UtilizationProfile& profile,
                    Finding& finding) {
  finding.Add("device", device, "id");
  finding.Add("active_ns", static_cast<double>(f.active_ns), "ns");
  finding.Add("busy_ns", static_cast<double>(f.busy_ns), "ns");
  finding.Add("busy_share", f.busy_share, "ratio");
  finding.Add("idle_ns", static_cast<double>(f.idle_ns), "ns");
  finding.Add("steady_idle_ns", static_cast<double>(f.steady_idle), "ns");
  finding.Add("steady_span_ns", static_cast<double>(f.steady_span), "ns");
  finding.Add("startup_idle_ns", static_cast<double>(tally.startup_idle), "ns");
  finding.Add("setup_idle_ns", static_cast<double>(tally.setup_idle), "ns");
  finding.Add("setup_gaps", static_cast<double>(tally.setup_gaps), "count");
  finding.Add("graph_node_idle_ns", static_cast<double>(tally.graph_node_idle), "ns");
  finding.Add("graph_node_gaps", static_cast<double>(tally.graph_node_gaps), "count");
  finding.Add("metrics_collection_ns", static_cast<double>(f.metrics_ns), "ns");
  if (f.unobserved_ns > 0) finding.Add("unobserved_ns", static_cast<double>(f.unobserved_ns), "ns");
  finding.Add("replayed_kernel_ns", static_cast<double>(f.replayed_ns), "ns");
  finding.Add("gaps", static_cast<double>(tally.gaps), "count");
  finding.Add("micro_gaps", static_cast<double>(tally.micro_gaps), "count");
  finding.Add("micro_gap_ns", static_cast<double>(tally.micro_gap_total), "ns");
  for (int c = 0; c < kCauseCount; ++c) {
    finding.Add(std::string(kCauseKeys[c]), static_cast<double>(tally.cause_ns[c]), "ns");
  }
  finding.Add("low_utilization_buckets", static_cast<double>(profile.low_buckets), "count");
  finding.Add("buckets", static_cast<double>(profile.buckets), "count");
}

// The causes, largest first; the longest gaps and the least busy bucket as spans.
void AddIdleEvidence(const GapTally& tally, const UtilizationProfile& profile, Finding& finding) {
  for (int c = 0; c < kCauseCount; ++c) {
    if (tally.cause_ns[c] > 0) {
      finding.offenders.push_back(Offender{"cause", std::string(kCauseNames[c]), 0, tally.cause_ns[c]});
    }
  }
  std::sort(finding.offenders.begin(), finding.offenders.end(),
            [](const Offender& a, const Offender& b) { return a.time_ns > b.time_ns; });
  for (const Gap& g : tally.longest) {
    if (!g.span.empty()) {
      finding.spans.push_back(Span{g.span.begin, g.span.end, absl::StrCat("idle gap: ", kCauseNames[g.cause])});
    }
  }
  if (!profile.worst_bucket.empty()) {
    finding.spans.push_back(Span{profile.worst_bucket.begin, profile.worst_bucket.end,
                                 absl::StrCat("least busy bucket: ", FormatPercent(profile.worst_share), " busy")});
  }
}

std::string IdleRecommendation(const IdleFigures& f, const GapTally& tally, const Thresholds& thresholds) {
  std::string text;
  if (f.top_cause >= 0) {
    text = absl::StrCat("Most idle time that counts is ", kCauseNames[f.top_cause], ": ", kCauseAdvice[f.top_cause],
                        ".");
  } else {
    text =
        "The idle time is one-off setup, start-up or the GPU's own latency between graph nodes; "
        "the steady state keeps the host feeding the GPU.";
  }
  if (f.setup_excluded > 0) {
    absl::StrAppend(&text, " ", FormatDuration(f.setup_excluded),
                    " of idle time is start-up or one-off setup (graph building, instantiation and first "
                    "launch, module loading, the wait before the first work): not counted as recoverable; "
                    "profile the steady "
                    "phase alone (--delay, or a cudaProfilerStart/Stop capture range) to see it without it.");
  }
  if (tally.graph_node_gaps > 0) {
    absl::StrAppend(&text, " ", tally.graph_node_gaps, " gaps between kernels of the same CUDA graph launch (",
                    FormatDuration(tally.graph_node_idle), ") are ", kCauseNames[kGraphNodeCause], ": ",
                    kCauseAdvice[kGraphNodeCause], "; not counted as recoverable by the host.");
  }
  if (f.metrics_ns > 0) {
    absl::StrAppend(&text, " ", FormatDuration(f.metrics_ns),
                    " the GPU spent in metric collection (kernel replay) is left out of the idle time and of "
                    "the active span.");
  }
  if (f.unobserved_ns > 0) {
    absl::StrAppend(&text, " ", FormatDuration(f.unobserved_ns),
                    " between or after the capture windows, while the timeline was off, is left out of the idle "
                    "time and of the active span: nothing was recorded there.");
  }
  if (f.replayed_ns > 0) {
    absl::StrAppend(&text, " ", FormatDuration(f.replayed_ns),
                    " of kernels replayed for metrics cannot be placed on the timeline and is counted as busy; the "
                    "causes above are the measured gaps, without it.");
  }
  if (tally.micro_gaps > 0) {
    absl::StrAppend(&text, " ", tally.micro_gaps, " gaps are shorter than ", thresholds.micro_gap_us, " us (",
                    FormatDuration(tally.micro_gap_total), " in all): launch latency between short kernels.");
  }
  return text;
}

}  // namespace

std::vector<Finding> GpuIdleRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  std::optional<HostActivity> host;  // built only when some device is idle enough to explain
  for (const DeviceTimeline& d : timeline.devices()) {
    IdleFigures device;
    device.active_ns = d.counted_active_ns();
    device.metrics_ns = d.metrics_idle_ns();
    device.unobserved_ns = d.unobserved_idle_ns();
    if (device.active_ns == 0) continue;
    // A device whose every kernel launch was replayed to collect metrics has no timeline of its
    // kernels: its gaps are the profiler's serialization, not an idle GPU.
    if (d.kernel_count == 0 && (d.replayed_kernel_ns > 0 || (timeline.devices().size() == 1 &&
                                                               timeline.replayed_kernel_count() > 0))) {
      continue;
    }
    device.busy_ns = d.busy_ns();
    // Launches replayed for metrics ran the program's work too, for their measured duration, where
    // the timeline cannot show it: counted as busy (DeviceTimeline::busy_with_replays_ns).
    device.replayed_ns = d.busy_with_replays_ns() - device.busy_ns;
    device.busy_share = static_cast<double>(device.busy_ns + device.replayed_ns) / static_cast<double>(device.active_ns);
    if (device.busy_share >= thresholds.gpu_busy_min_share) continue;
    if (host) {
      host->Rewind();
    } else {
      host.emplace(timeline);
    }
    const IntervalSet skip = d.NotCounted();
    const GapTally tally = GapAttribution(timeline, d, skip, thresholds, *host).Run();
    const UtilizationProfile profile = ProfileUtilization(d, skip, thresholds);
    const SteadyState steady = SteadyStateOf(timeline, d, thresholds.idle_startup_ops_share);
    const IdleFigures f = CountedIdle(device, steady, tally, thresholds);

    Finding finding;
    finding.rule_id = "gpu.idle";
    finding.recoverable_ns = f.steady_idle;
    finding.severity = SeverityFor(f.steady_idle, f.steady_span, thresholds);
    finding.headline = IdleHeadline(d.device, f, tally);
    AddIdleNumbers(d.device, f, tally, profile, finding);
    AddIdleEvidence(tally, profile, finding);
    finding.recommendation = IdleRecommendation(f, tally, thresholds);
    findings.push_back(std::move(finding));
  }
  return findings;
}

}  // namespace cuscope::analysis
