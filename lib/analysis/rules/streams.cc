// streams.serialized: streams on one device whose work interleaves in time but never runs
//   concurrently, with nothing visible ordering them (no event waits on either): the signature of a
//   false dependency, such as the legacy default stream serializing every blocking stream.
// streams.event_wait: operations that started late because their stream waited on an event,
//   measured from the moment both the previous operation on the stream had finished and the launch
//   call had returned. A stall is only a cost when it costs GPU time: waiting for a producer while
//   the GPU is busy with other work and the released operation then runs alongside other work is
//   pipelining. What counts ("lost") is the GPU idle during the stall, plus the overlap the stall
//   prevented: the time the GPU ran a single operation during the stall, up to the time the
//   released operation then ran alone (two streams taking turns that could have run side by side).
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

constexpr size_t kMaxStreamsCompared = 16;

void SerializedStreams(const Timeline& timeline, const Thresholds& thresholds,
                       const absl::flat_hash_set<uint32_t>& ordered_streams, std::vector<Finding>& findings) {
  for (const DeviceTimeline& d : timeline.devices()) {
    std::vector<const StreamInfo*> candidates;
    for (const StreamInfo& s : timeline.streams()) {
      if (s.device == d.device && static_cast<double>(s.ops) >= thresholds.stream_min_ops &&
          !ordered_streams.contains(s.stream)) {
        candidates.push_back(&s);
      }
    }
    if (candidates.size() < 2) continue;
    std::sort(candidates.begin(), candidates.end(),
              [](const StreamInfo* a, const StreamInfo* b) { return a->busy_ns > b->busy_ns; });
    if (candidates.size() > kMaxStreamsCompared) candidates.resize(kMaxStreamsCompared);
    absl::flat_hash_map<uint32_t, size_t> slot;
    for (size_t i = 0; i < candidates.size(); ++i) slot[candidates[i]->stream] = i;
    std::vector<IntervalSetBuilder> builders(candidates.size());
    for (OpRef op : d.ops) {
      auto it = slot.find(timeline.OpStream(op));
      if (it != slot.end()) builders[it->second].Add(timeline.OpInterval(op));
    }
    std::vector<IntervalSet> busy;
    for (IntervalSetBuilder& b : builders) busy.push_back(b.Take());

    std::vector<bool> involved(candidates.size(), false);
    uint64_t pairs = 0;
    std::vector<std::string> pair_names;
    for (size_t i = 0; i < candidates.size(); ++i) {
      for (size_t j = i + 1; j < candidates.size(); ++j) {
        const StreamInfo& a = *candidates[i];
        const StreamInfo& b = *candidates[j];
        const uint64_t together = std::min(a.active.end, b.active.end) > std::max(a.active.begin, b.active.begin)
                                      ? std::min(a.active.end, b.active.end) - std::max(a.active.begin, b.active.begin)
                                      : 0;
        const uint64_t shorter = std::min(a.active.length(), b.active.length());
        if (shorter == 0 ||
            static_cast<double>(together) < thresholds.stream_interleave_min_share * static_cast<double>(shorter)) {
          continue;  // one runs after the other: sequential phases, not a false dependency
        }
        const uint64_t overlap = TotalLength(Intersect(busy[i], busy[j]));
        const uint64_t smaller_busy = std::min(a.busy_ns, b.busy_ns);
        if (static_cast<double>(overlap) > thresholds.stream_max_overlap_share * static_cast<double>(smaller_busy)) {
          continue;
        }
        involved[i] = involved[j] = true;
        ++pairs;
        if (pair_names.size() < 5) pair_names.push_back(absl::StrCat(a.stream, "+", b.stream));
      }
    }
    if (pairs == 0) continue;
    uint64_t sum_busy = 0, max_busy = 0, streams = 0;
    IntervalSet together;  // the involved streams' busy time as it ran
    Finding f;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (!involved[i]) continue;
      ++streams;
      sum_busy += candidates[i]->busy_ns;
      max_busy = std::max(max_busy, candidates[i]->busy_ns);
      together = Union(together, busy[i]);
      f.offenders.push_back(
          Offender{"stream", absl::StrCat("stream ", candidates[i]->stream), candidates[i]->ops, candidates[i]->busy_ns});
    }
    // What the fix changes: at best the streams' work runs side by side and takes as long as the
    // busiest one; today it takes the union of their busy time (pairs that already overlap keep
    // their overlap). Not the sum: two work streams that overlap beside a serialized third recover
    // only the third's time.
    const uint64_t union_busy = TotalLength(together);
    const uint64_t recoverable = union_busy - std::min(union_busy, max_busy);
    const uint64_t all_pairs = streams * (streams - 1) / 2;
    f.rule_id = "streams.serialized";
    f.recoverable_ns = recoverable;
    f.severity = SeverityFor(recoverable, d.active.length(), thresholds);
    // Literally true: every pair, or which ones.
    f.headline = pairs == all_pairs
                     ? absl::StrCat("GPU ", d.device, ": ", streams,
                                    " streams interleave in time but never run concurrently (",
                                    FormatDuration(recoverable), " could overlap)")
                     : absl::StrCat("GPU ", d.device, ": ", pairs, " of the ", all_pairs, " pairs of ", streams,
                                    " interleaving streams never run concurrently (streams ",
                                    absl::StrJoin(pair_names, ", "), "; ", FormatDuration(recoverable),
                                    " could overlap)");
    f.Add("device", d.device, "id");
    f.Add("streams", static_cast<double>(streams), "count");
    f.Add("serialized_pairs", static_cast<double>(pairs), "count");
    f.Add("busy_sum_ns", static_cast<double>(sum_busy), "ns");
    f.Add("busy_max_ns", static_cast<double>(max_busy), "ns");
    f.Add("busy_union_ns", static_cast<double>(union_busy), "ns");
    for (const std::string& p : pair_names) f.spans.push_back(Span{d.active.begin, d.active.end, "streams " + p});
    f.recommendation =
        "Nothing visible orders these streams, yet they never overlap: a false dependency. Usual causes: work on the "
        "legacy default stream (which waits for and blocks every blocking stream): create streams with "
        "cudaStreamNonBlocking or compile with --default-stream per-thread; one event shared by the streams; or "
        "each kernel filling the whole GPU (then overlap cannot help).";
    findings.push_back(std::move(f));
  }
}

void EventWaits(const Timeline& timeline, const Thresholds& thresholds, std::vector<Finding>& findings) {
  const core::Trace& trace = timeline.trace();
  std::vector<const core::SyncRecord*> waits;
  for (const core::SyncRecord& s : trace.syncs) {
    if (s.type == v1::SYNC_TYPE_STREAM_WAIT_EVENT && s.stream != core::kNoStream) waits.push_back(&s);
  }
  if (waits.empty()) return;
  std::sort(waits.begin(), waits.end(), [](const auto* a, const auto* b) { return a->start < b->start; });
  for (const DeviceTimeline& d : timeline.devices()) {
    absl::flat_hash_map<uint32_t, std::vector<OpRef>> ops_by_stream;
    absl::flat_hash_set<uint32_t> waiting_streams;
    for (const auto* w : waits) waiting_streams.insert(w->stream);
    for (OpRef op : d.ops) {
      const uint32_t stream = timeline.OpStream(op);
      if (waiting_streams.contains(stream)) ops_by_stream[stream].push_back(op);
    }
    uint64_t stalls = 0, stall_ns = 0, idle_ns = 0, lost_ns = 0;
    // Where two or more operations run at once: an operation starting before the latest end so far
    // overlaps it until the earlier of the two ends.
    IntervalSet concurrent;
    {
      IntervalSetBuilder builder;
      uint64_t latest_end = 0;
      for (OpRef op : d.ops) {
        const Interval x = timeline.OpInterval(op);
        if (x.begin < latest_end) builder.Add(x.begin, std::min(x.end, latest_end));
        latest_end = std::max(latest_end, x.end);
      }
      concurrent = builder.Take();
    }
    OffenderTally streams("stream"), kernels("kernel");
    std::vector<Span> spans;
    for (const auto* w : waits) {
      auto it = ops_by_stream.find(w->stream);
      if (it == ops_by_stream.end()) continue;
      const std::vector<OpRef>& ops = it->second;
      // The first operation on the stream that was submitted after the wait.
      auto next = std::find_if(ops.begin(), ops.end(), [&](OpRef op) {
        uint64_t corr = 0;
        if (op.kind() == OpKind::kKernel) corr = trace.kernels[op.index()].correlation_id;
        if (op.kind() == OpKind::kMemcpy) corr = trace.memcpys[op.index()].correlation_id;
        if (op.kind() == OpKind::kMemset) corr = trace.memsets[op.index()].correlation_id;
        const core::ApiCallRow* call = timeline.ApiFor(corr);
        return call != nullptr ? call->start >= w->start : timeline.OpInterval(op).begin >= w->end;
      });
      if (next == ops.end()) continue;
      const Interval x = timeline.OpInterval(*next);
      uint64_t ready = w->end;
      if (next != ops.begin()) ready = std::max(ready, timeline.OpInterval(*(next - 1)).end);
      uint64_t corr = 0;
      if (next->kind() == OpKind::kKernel) corr = trace.kernels[next->index()].correlation_id;
      if (const core::ApiCallRow* call = timeline.ApiFor(corr)) ready = std::max(ready, call->end);
      if (x.begin <= ready) continue;
      const Interval stall{ready, x.begin};
      ++stalls;
      stall_ns += stall.length();
      const uint64_t busy_in_stall = CoveredLength(d.busy, stall);
      const uint64_t idle_in_stall = stall.length() - busy_in_stall;
      idle_ns += idle_in_stall;
      const uint64_t single_in_stall = busy_in_stall - std::min(busy_in_stall, CoveredLength(concurrent, stall));
      const uint64_t ran_alone = x.length() - std::min(x.length(), CoveredLength(concurrent, x));
      lost_ns += idle_in_stall + std::min(single_in_stall, ran_alone);
      streams.Add(absl::StrCat("stream ", w->stream), stall.length());
      if (next->kind() == OpKind::kKernel) kernels.Add(timeline.KernelName(trace.kernels[next->index()]), stall.length());
      if (spans.size() < 3) spans.push_back(Span{stall.begin, stall.end, absl::StrCat("stream ", w->stream, " stalled")});
    }
    if (stalls == 0 || d.active.length() == 0) continue;
    const double share = static_cast<double>(stall_ns) / static_cast<double>(d.active.length());
    const double lost_share = static_cast<double>(lost_ns) / static_cast<double>(d.active.length());
    if (lost_share < thresholds.event_wait_min_share) continue;
    Finding f;
    f.rule_id = "streams.event_wait";
    f.recoverable_ns = lost_ns;
    f.severity = SeverityFor(lost_ns, d.active.length(), thresholds);
    if (static_cast<double>(lost_ns) >= thresholds.min_recoverable_ms * 1e6) f.severity = std::max(Severity::kWarning, f.severity);
    f.headline = absl::StrCat("GPU ", d.device, ": ", stalls, " event waits stalled streams for ",
                              FormatDuration(stall_ns), ", costing ", FormatDuration(lost_ns), " of GPU time (",
                              FormatDuration(idle_ns), " with the GPU idle, the rest streams taking turns instead of "
                              "overlapping)");
    f.Add("device", d.device, "id");
    f.Add("stalls", static_cast<double>(stalls), "count");
    f.Add("stall_ns", static_cast<double>(stall_ns), "ns");
    f.Add("stall_share", share, "ratio");
    f.Add("idle_during_stalls_ns", static_cast<double>(idle_ns), "ns");
    f.Add("lost_ns", static_cast<double>(lost_ns), "ns");
    f.Add("lost_share", lost_share, "ratio");
    f.offenders = streams.Top(3);
    for (Offender& o : kernels.Top(3)) f.offenders.push_back(std::move(o));
    f.spans = std::move(spans);
    f.recommendation =
        "The waiting stream sits idle until the event completes, and its work then runs alone: record the event "
        "right after the work the waiter really needs (not after unrelated work queued behind it), split the "
        "producing kernel, or give the waiting stream independent work to run before the wait.";
    findings.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> StreamsRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  absl::flat_hash_set<uint32_t> ordered;
  for (const core::SyncRecord& s : timeline.trace().syncs) {
    if (s.type == v1::SYNC_TYPE_STREAM_WAIT_EVENT && s.stream != core::kNoStream) ordered.insert(s.stream);
  }
  SerializedStreams(timeline, thresholds, ordered, findings);
  EventWaits(timeline, thresholds, findings);
  return findings;
}

}  // namespace cuscope::analysis
