// sync.points: host threads that spend their time waiting for the GPU, in explicit
// synchronization calls, synchronous copies and memsets, or calls that synchronize implicitly
// (cudaFree, pinned host allocation).
//
// Reported when the waits are many and come at a rate that says "every step" rather than "at the
// end of each phase", and either take a large share of the thread's time or, each short, cause GPU
// idle time worth a share of it (the cadence: a read-back every few kernels). Waiting while the GPU
// is busy costs nothing: what it could recover is the GPU idle time these waits cause: idle while
// the host waits, and idle from the wait's return until the next GPU operation starts (the GPU
// drained its queue and the host has to refill it), less the gap a host slower than the GPU leaves
// between operations with or without syncs (a PyTorch loop of tiny kernels keeps it after the fix).
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

// A sync every this many kernels or fewer is a cadence (every step), said in the finding.
constexpr double kCadenceKernels = 10;

bool Waits(const core::ApiTraits& traits) {
  return traits.category == core::ApiCategory::kSync || traits.synchronous_transfer || traits.implicit_sync;
}

// GPU idle time caused by a wait that ran over `wait`: idle inside it plus idle from its end to the
// next operation, less the gap the GPU has between operations anyway (`usual_gap`: a host that
// launches slower than the GPU runs keeps that gap without the sync, so the fix does not recover it).
uint64_t IdleCausedBy(const IntervalSet& busy, Interval wait, uint64_t usual_gap) {
  if (busy.empty()) return 0;
  uint64_t idle = wait.length() - CoveredLength(busy, wait);
  auto next = std::upper_bound(busy.begin(), busy.end(), wait.end,
                               [](uint64_t t, const Interval& x) { return t < x.end; });
  if (next != busy.end() && next->begin > wait.end) idle += (next->begin - wait.end) - std::min(next->begin - wait.end, usual_gap);
  return idle;
}

uint64_t Median(std::vector<uint64_t>& values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// The gap the GPU would keep between operations with the syncs gone: a host that takes longer to
// enqueue an operation (launch or copy call to the next, no wait between) than the GPU takes to run
// one leaves the difference idle whatever it synchronizes. 0 for a host that keeps ahead.
uint64_t GapWithoutSyncs(const Timeline& timeline, const ThreadTimeline& th, const IntervalSet& busy) {
  std::vector<uint64_t> intervals;
  uint64_t last_enqueue = 0;
  for (uint32_t index : th.api_calls) {
    const core::ApiCallRow& call = timeline.trace().api_calls[index];
    const core::ApiTraits& traits = timeline.Traits(call);
    if (Waits(traits)) {
      last_enqueue = 0;  // the interval across a wait is the sync's own
    } else if (traits.category == core::ApiCategory::kLaunch || traits.category == core::ApiCategory::kCopy) {
      if (last_enqueue != 0 && call.start > last_enqueue) intervals.push_back(call.start - last_enqueue);
      last_enqueue = call.start;
    }
  }
  std::vector<uint64_t> runs;
  for (const Interval& b : busy) {
    if (b.begin >= th.active.begin && b.end <= th.active.end) runs.push_back(b.length());
  }
  const uint64_t enqueue = Median(intervals), run = Median(runs);
  return enqueue > run ? enqueue - run : 0;
}

using CopyByCorrelation = absl::flat_hash_map<uint64_t, const core::MemcpyRecord*>;

// One thread's synchronizing calls, counted by kind, with the GPU idle time they cost.
struct ThreadWaits {
  uint64_t calls = 0, stream_syncs = 0, device_syncs = 0, event_syncs = 0, sync_copies = 0, implicit = 0;
  uint64_t readbacks = 0, pageable = 0, recoverable = 0, idle_in_waits = 0;
  uint64_t waiting_ns = 0;
  uint64_t usual_gap = 0;
  OffenderTally apis{"api"};
  OffenderTally ranges{"nvtx"};
};

// Walks the thread's API calls once: the waits, what kind each is, and the idle each leaves the GPU.
ThreadWaits TallyWaits(const Timeline& timeline, const ThreadTimeline& th, const IntervalSet& busy,
                       const CopyByCorrelation& copy_by_correlation, uint64_t readback_max) {
  const core::Trace& trace = timeline.trace();
  ThreadWaits w;
  IntervalSetBuilder waiting;
  uint64_t covered_end = 0;
  w.usual_gap = GapWithoutSyncs(timeline, th, busy);
  // A small device-to-host copy the thread enqueued last before a wait is a read-back (PyTorch's
  // .item(): an asynchronous copy, then a stream sync).
  const auto small_readback = [&](const core::ApiCallRow& call) {
    auto it = copy_by_correlation.find(call.correlation_id);
    return call.correlation_id != 0 && it != copy_by_correlation.end() &&
           it->second->copy_kind == v1::COPY_KIND_DTOH && it->second->bytes <= readback_max;
  };
  bool readback_pending = false;
  for (uint32_t index : th.api_calls) {
    const core::ApiCallRow& call = trace.api_calls[index];
    const core::ApiTraits& traits = timeline.Traits(call);
    if (!Waits(traits)) {
      if (traits.category == core::ApiCategory::kLaunch || traits.category == core::ApiCategory::kCopy) {
        readback_pending = small_readback(call);
      }
      continue;
    }
    waiting.Add(call.start, call.end);
    // A runtime call and the driver call inside it are one wait.
    if (call.start < covered_end) continue;
    covered_end = call.end;
    const Interval wait{call.start, std::max(call.start, call.end)};
    ++w.calls;
    switch (traits.sync) {
      case core::SyncKind::kStream: ++w.stream_syncs; break;
      case core::SyncKind::kDevice: ++w.device_syncs; break;
      case core::SyncKind::kEvent: ++w.event_syncs; break;
      case core::SyncKind::kNone: break;
    }
    if (traits.synchronous_transfer) ++w.sync_copies;
    if (traits.implicit_sync) ++w.implicit;
    if (small_readback(call) || readback_pending) ++w.readbacks;  // a synchronous copy, or a copy then this wait
    readback_pending = false;
    if (auto it = copy_by_correlation.find(call.correlation_id); it != copy_by_correlation.end()) {
      const core::MemcpyRecord& m = *it->second;
      if (m.src_kind == v1::MEMORY_KIND_PAGEABLE || m.dst_kind == v1::MEMORY_KIND_PAGEABLE) ++w.pageable;
    }
    w.idle_in_waits += wait.length() - std::min(wait.length(), CoveredLength(busy, wait));
    const uint64_t caused = IdleCausedBy(busy, wait, w.usual_gap);
    w.recoverable += caused;
    w.apis.Add(timeline.ApiName(call), wait.length());
    const NvtxRange* range = timeline.EnclosingRange(th.thread, call.start);
    w.ranges.Add(range != nullptr ? std::string_view(trace.dict.str(range->name)) : std::string_view("(no NVTX range)"),
                 wait.length());
  }
  // Consecutive waits can claim the same stretch of idle time; never claim more than the GPU idled.
  w.recoverable = std::min(w.recoverable, th.active.length() - std::min(th.active.length(), CoveredLength(busy, th.active)));
  w.waiting_ns = TotalLength(waiting.Take());
  return w;
}

// Kernels on any device that start within `span`: with the sync count, the cadence the finding states.
uint64_t KernelsStartingIn(const Timeline& timeline, Interval span) {
  uint64_t kernels = 0;
  for (const DeviceTimeline& d : timeline.devices()) {
    for (OpRef op : d.ops) {
      if (op.kind() != OpKind::kKernel) continue;
      const uint64_t start = timeline.OpInterval(op).begin;
      kernels += start >= span.begin && start <= span.end;
    }
  }
  return kernels;
}

// The advice grows with what the waits show: read-backs, a cadence of a few kernels, allocations.
std::string SyncRecommendation(const ThreadWaits& w, bool long_waits, double kernels_per_sync) {
  std::string text =
      "Remove synchronization from the steady-state loop: record events and let the GPU wait on them "
      "(cudaStreamWaitEvent) instead of the host, keep results on the GPU instead of reading them back "
      "each step";
  if (w.readbacks > 0) absl::StrAppend(&text, " (", w.readbacks, " small D2H read-backs, e.g. .item())");
  if (!long_waits || (w.readbacks > 0 && kernels_per_sync <= kCadenceKernels)) {
    absl::StrAppend(&text,
                    long_waits ? "; here the waits come every few kernels" : "; here the cost is the cadence, not the waits",
                    ": accumulate on the GPU (sum losses, check conditions in a kernel) and read back every N steps "
                    "instead of every few kernels, or copy asynchronously into pinned memory and read it a step later");
  }
  if (w.implicit > 0) absl::StrAppend(&text, ", allocate outside the loop (cudaFree and pinned allocation synchronize)");
  absl::StrAppend(&text, ".");
  return text;
}

// The finding for a thread that passed the thresholds. `long_waits`: the waits themselves are the
// cost; otherwise it is the cadence (short waits, each draining the GPU's queue).
Finding SyncFinding(const Timeline& timeline, const ThreadTimeline& th, const ThreadWaits& w, double share,
                    double rate, bool long_waits, const Thresholds& thresholds) {
  const uint64_t active_ns = th.active.length();
  const uint64_t calls = w.calls, waiting_ns = w.waiting_ns, recoverable = w.recoverable;
  // The cadence: GPU operations the thread's span holds per sync, and the idle after each return.
  const uint64_t kernels_in_span = KernelsStartingIn(timeline, th.active);
  const double kernels_per_sync = static_cast<double>(kernels_in_span) / static_cast<double>(calls);
  const uint64_t idle_after = recoverable - std::min(recoverable, w.idle_in_waits);
  const double idle_after_mean = static_cast<double>(idle_after) / static_cast<double>(calls);

  Finding f;
  f.rule_id = "sync.points";
  f.recoverable_ns = recoverable;
  // Severity by what the program loses, relative to the whole run: a short-lived helper thread
  // that waits most of its life costs the run little.
  f.severity = SeverityFor(recoverable, std::max(active_ns, timeline.span().length()), thresholds);
  if (long_waits) {
    f.headline = absl::StrCat(timeline.ThreadLabel(th.thread), " waits for the GPU ", FormatPercent(share),
                              " of its time (", calls, " synchronizing calls, ", FormatDuration(waiting_ns), ")");
    // Every few kernels: the cadence is part of the cost (the queue drains at each).
    if (kernels_per_sync <= kCadenceKernels) {
      absl::StrAppend(&f.headline, absl::StrFormat(", one per %.1f kernels (%.0f per second)", kernels_per_sync, rate));
    }
  } else {
    f.headline = absl::StrCat(
        timeline.ThreadLabel(th.thread), " synchronizes with the GPU ", calls, " times in ",
        FormatDuration(active_ns), absl::StrFormat(" (%.0f per second, one per %.1f kernels)", rate, kernels_per_sync),
        ": each wait is short (", FormatDuration(waiting_ns / calls), " on average) but the GPU idles ",
        FormatDuration(static_cast<uint64_t>(idle_after_mean)), " after each while the host refills its queue, ",
        FormatDuration(recoverable), " of GPU idle in all");
  }
  f.Add("thread_active_ns", static_cast<double>(active_ns), "ns");
  f.Add("waiting_ns", static_cast<double>(waiting_ns), "ns");
  f.Add("waiting_share", share, "ratio");
  f.Add("sync_calls", static_cast<double>(calls), "count");
  f.Add("stream_syncs", static_cast<double>(w.stream_syncs), "count");
  f.Add("device_syncs", static_cast<double>(w.device_syncs), "count");
  f.Add("event_syncs", static_cast<double>(w.event_syncs), "count");
  f.Add("synchronous_copies", static_cast<double>(w.sync_copies), "count");
  f.Add("implicit_syncs_alloc_free", static_cast<double>(w.implicit), "count");
  f.Add("small_readbacks", static_cast<double>(w.readbacks), "count");
  f.Add("pageable_sync_copies", static_cast<double>(w.pageable), "count");
  f.Add("sync_rate_per_s", rate, "1/s");
  f.Add("kernels_per_sync", kernels_per_sync, "count");
  f.Add("idle_after_sync_mean_ns", idle_after_mean, "ns");
  f.Add("gpu_idle_during_waits_ns", static_cast<double>(w.idle_in_waits), "ns");
  f.Add("gpu_idle_caused_ns", static_cast<double>(recoverable), "ns");
  f.Add("gap_without_syncs_ns", static_cast<double>(w.usual_gap), "ns");
  f.offenders = w.apis.Top(5);
  for (Offender& o : w.ranges.Top(3)) f.offenders.push_back(std::move(o));
  f.offenders.push_back(Offender{"thread", timeline.ThreadLabel(th.thread), calls, waiting_ns});
  f.spans.push_back(Span{th.active.begin, th.active.end, "thread active span"});
  f.recommendation = SyncRecommendation(w, long_waits, kernels_per_sync);
  return f;
}

}  // namespace

std::vector<Finding> SyncPointsRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  const core::Trace& trace = timeline.trace();
  // Any device busy: the host waits on whichever it synchronizes with.
  // One device (the common case) is used in place; several are merged.
  IntervalSet merged;
  const IntervalSet* busy_ptr = &merged;
  if (timeline.devices().size() == 1) {
    busy_ptr = &timeline.devices().front().busy;
  } else {
    for (const DeviceTimeline& d : timeline.devices()) merged = Union(merged, d.busy);
  }
  const IntervalSet& busy = *busy_ptr;
  CopyByCorrelation copy_by_correlation;
  for (const core::MemcpyRecord& m : trace.memcpys) copy_by_correlation[m.correlation_id] = &m;
  const uint64_t readback_max = static_cast<uint64_t>(thresholds.readback_max_bytes);

  for (const ThreadTimeline& th : timeline.threads()) {
    const uint64_t active_ns = th.active.length();
    if (active_ns == 0) continue;
    const ThreadWaits w = TallyWaits(timeline, th, busy, copy_by_correlation, readback_max);
    const double share = static_cast<double>(w.waiting_ns) / static_cast<double>(active_ns);
    if (static_cast<double>(w.calls) < thresholds.sync_min_calls) continue;
    // A few syncs at phase ends are normal; a loop that syncs every step makes them at a high rate.
    const double rate = static_cast<double>(w.calls) / (static_cast<double>(active_ns) / 1e9);
    if (rate < thresholds.sync_min_rate_per_s) continue;
    const double caused_share = static_cast<double>(w.recoverable) / static_cast<double>(active_ns);
    const bool long_waits = share >= thresholds.sync_min_share;
    if (!long_waits && caused_share < thresholds.sync_min_caused_idle_share) continue;
    findings.push_back(SyncFinding(timeline, th, w, share, rate, long_waits, thresholds));
  }
  return findings;
}

}  // namespace cuscope::analysis
