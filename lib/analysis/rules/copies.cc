// Copies and memsets that keep the GPU or the host from overlapping work:
//   copies.serialized     H2D/D2H copies that run while no kernel runs;
//   copies.pageable_async "async" copies touching pageable memory (staged by the driver: no overlap);
//   copies.sync           synchronous copies the host waits for;
//   memset.sync           synchronous memsets.
//
// Synchronous H2D copies of at most `sync_copy_spare_h2d_bytes` are spared, as nsys does: the
// driver copies a small pageable source into a staging buffer and returns before the transfer,
// so the host barely waits. Small D2H copies are not spared: the host must wait for the data
// (they are the `.item()` read-backs) and sync.points counts them. Same-device copies (D2D) are
// spared too: they are ordered on the GPU and do not involve the host's memory.
#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

bool TouchesPageable(const core::MemcpyRecord& m) {
  return m.src_kind == v1::MEMORY_KIND_PAGEABLE || m.dst_kind == v1::MEMORY_KIND_PAGEABLE;
}

absl::string_view DirectionName(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD: return "HtoD";
    case v1::COPY_KIND_DTOH: return "DtoH";
    case v1::COPY_KIND_DTOD: return "DtoD";
    case v1::COPY_KIND_HTOH: return "HtoH";
    case v1::COPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}


void SerializedCopies(const Timeline& timeline, const Thresholds& thresholds, std::vector<Finding>& findings) {
  const core::Trace& trace = timeline.trace();
  for (const DeviceTimeline& d : timeline.devices()) {
    if (d.kernel_count == 0) continue;
    uint64_t h2d_ns = 0, d2h_ns = 0, h2d_overlap = 0, d2h_overlap = 0, copies = 0;
    OffenderTally apis("api");
    // The union of the kernels, built only as far as the copies need it: ops come in start order,
    // so a kernel starting after a copy's end cannot overlap it or any copy before it, and union
    // intervals ending before a copy's start cannot overlap it or any later one.
    std::deque<Interval> kernels;
    size_t next_kernel = 0;
    for (OpRef op : d.ops) {
      if (op.kind() != OpKind::kMemcpy) continue;
      const core::MemcpyRecord& m = trace.memcpys[op.index()];
      if (m.copy_kind != v1::COPY_KIND_HTOD && m.copy_kind != v1::COPY_KIND_DTOH) continue;
      const Interval x = timeline.OpInterval(op);
      for (; next_kernel < d.ops.size(); ++next_kernel) {
        const OpRef k = d.ops[next_kernel];
        if (k.kind() != OpKind::kKernel) continue;
        const Interval y = timeline.OpInterval(k);
        if (y.begin >= x.end) break;
        if (y.empty()) continue;
        if (!kernels.empty() && y.begin <= kernels.back().end) {
          kernels.back().end = std::max(kernels.back().end, y.end);
        } else {
          kernels.push_back(y);
        }
      }
      while (!kernels.empty() && kernels.front().end <= x.begin) kernels.pop_front();
      uint64_t overlap = 0;
      for (const Interval& y : kernels) {
        if (y.begin >= x.end) break;
        overlap += std::min(y.end, x.end) - std::max(y.begin, x.begin);
      }
      ++copies;
      if (m.copy_kind == v1::COPY_KIND_HTOD) {
        h2d_ns += x.length();
        h2d_overlap += overlap;
      } else {
        d2h_ns += x.length();
        d2h_overlap += overlap;
      }
      const core::ApiCallRow* call = timeline.ApiFor(m.correlation_id);
      apis.Add(absl::StrCat(call != nullptr ? std::string(timeline.ApiName(*call)) : std::string("(no API call)"), " ",
                            DirectionName(m.copy_kind)),
               x.length() - overlap);
    }
    const uint64_t copy_ns = h2d_ns + d2h_ns;
    if (copy_ns == 0 || d.active.length() == 0) continue;
    const double copy_share = static_cast<double>(copy_ns) / static_cast<double>(d.active.length());
    const double overlap_share = static_cast<double>(h2d_overlap + d2h_overlap) / static_cast<double>(copy_ns);
    if (copy_share < thresholds.copy_min_share || overlap_share >= thresholds.copy_overlap_min_share) continue;
    const uint64_t exposed = copy_ns - h2d_overlap - d2h_overlap;
    // Overlap can hide a copy only behind kernel time.
    const uint64_t recoverable = std::min(exposed, d.kernel_time_ns);
    Finding f;
    f.rule_id = "copies.serialized";
    f.recoverable_ns = recoverable;
    f.severity = SeverityFor(recoverable, d.active.length(), thresholds);
    f.headline = absl::StrCat("GPU ", d.device, ": host<->device copies take ", FormatPercent(copy_share),
                              " of the active time and only ", FormatPercent(overlap_share),
                              " of it overlaps kernels");
    f.Add("device", d.device, "id");
    f.Add("copies", static_cast<double>(copies), "count");
    f.Add("h2d_ns", static_cast<double>(h2d_ns), "ns");
    f.Add("d2h_ns", static_cast<double>(d2h_ns), "ns");
    f.Add("h2d_overlap_share", h2d_ns ? static_cast<double>(h2d_overlap) / static_cast<double>(h2d_ns) : 0, "ratio");
    f.Add("d2h_overlap_share", d2h_ns ? static_cast<double>(d2h_overlap) / static_cast<double>(d2h_ns) : 0, "ratio");
    f.Add("copy_share", copy_share, "ratio");
    f.Add("overlap_share", overlap_share, "ratio");
    f.offenders = apis.Top(5);
    f.spans.push_back(Span{d.active.begin, d.active.end, "device active span"});
    f.recommendation =
        "Overlap copies with compute: pinned host buffers (cudaHostAlloc / pin_memory=True), "
        "cudaMemcpyAsync on a stream of their own, and kernels working on the previous batch meanwhile.";
    findings.push_back(std::move(f));
  }
}

void PageableAsyncCopies(const Timeline& timeline, const Thresholds& thresholds, std::vector<Finding>& findings) {
  const core::Trace& trace = timeline.trace();
  uint64_t count = 0, bytes = 0, time_ns = 0;
  OffenderTally apis("api");
  std::vector<Span> spans;
  for (const core::MemcpyRecord& m : trace.memcpys) {
    if (!m.async || !TouchesPageable(m)) continue;
    ++count;
    bytes += m.bytes;
    const uint64_t duration = m.end > m.start ? m.end - m.start : 0;
    time_ns += duration;
    const core::ApiCallRow* call = timeline.ApiFor(m.correlation_id);
    apis.Add(absl::StrCat(call != nullptr ? std::string(timeline.ApiName(*call)) : std::string("(no API call)"), " ", DirectionName(m.copy_kind)),
             duration);
    if (spans.size() < 3) spans.push_back(Span{m.start, m.end, "async copy from/to pageable memory"});
  }
  if (count == 0 || static_cast<double>(count) < thresholds.pageable_async_min_count) return;
  Finding f;
  f.rule_id = "copies.pageable_async";
  f.recoverable_ns = time_ns;
  f.severity = std::max(Severity::kWarning, SeverityFor(time_ns, timeline.span().length(), thresholds));
  f.headline = absl::StrCat(count, " asynchronous copies touch pageable memory (", FormatBytes(bytes), ", ",
                            FormatDuration(time_ns), "): they are staged and cannot overlap");
  f.Add("copies", static_cast<double>(count), "count");
  f.Add("bytes", static_cast<double>(bytes), "bytes");
  f.Add("time_ns", static_cast<double>(time_ns), "ns");
  f.offenders = apis.Top(5);
  f.spans = std::move(spans);
  f.recommendation =
      "Pin the host buffers (cudaHostAlloc/cudaHostRegister, pin_memory=True): a copy from pageable memory goes "
      "through a staging buffer and returns only when done, whatever the Async in its name.";
  findings.push_back(std::move(f));
}

void SyncCopies(const Timeline& timeline, const Thresholds& thresholds, std::vector<Finding>& findings) {
  const core::Trace& trace = timeline.trace();
  const uint64_t spare = static_cast<uint64_t>(thresholds.sync_copy_spare_h2d_bytes);
  uint64_t count = 0, bytes = 0, host_wait = 0, spared = 0;
  OffenderTally apis("api");
  std::vector<Span> spans;
  for (const core::MemcpyRecord& m : trace.memcpys) {
    if (m.async || m.copy_kind == v1::COPY_KIND_DTOD || m.copy_kind == v1::COPY_KIND_HTOH) continue;
    if (m.copy_kind == v1::COPY_KIND_HTOD && m.bytes <= spare) {
      ++spared;
      continue;
    }
    ++count;
    bytes += m.bytes;
    const core::ApiCallRow* call = timeline.ApiFor(m.correlation_id);
    const uint64_t wait = call != nullptr ? call->end - std::min(call->end, call->start)
                                          : (m.end > m.start ? m.end - m.start : 0);
    host_wait += wait;
    apis.Add(absl::StrCat(call != nullptr ? std::string(timeline.ApiName(*call)) : std::string("(no API call)"), " ", DirectionName(m.copy_kind)),
             wait);
    if (spans.size() < 3) spans.push_back(Span{m.start, m.end, "synchronous copy"});
  }
  if (count == 0 || static_cast<double>(count) < thresholds.sync_copy_min_count) return;
  Finding f;
  f.rule_id = "copies.sync";
  f.recoverable_ns = host_wait;
  f.severity = SeverityFor(host_wait, timeline.span().length(), thresholds);
  f.headline = absl::StrCat(count, " synchronous copies (", FormatBytes(bytes), ") block the host for ",
                            FormatDuration(host_wait));
  f.Add("copies", static_cast<double>(count), "count");
  f.Add("bytes", static_cast<double>(bytes), "bytes");
  f.Add("host_wait_ns", static_cast<double>(host_wait), "ns");
  f.Add("spared_small_h2d", static_cast<double>(spared), "count");
  f.offenders = apis.Top(5);
  f.spans = std::move(spans);
  f.recommendation = "Use cudaMemcpyAsync from pinned memory on a non-default stream and synchronize only where "
                     "the host needs the data.";
  findings.push_back(std::move(f));
}

void SyncMemsets(const Timeline& timeline, const Thresholds& thresholds, std::vector<Finding>& findings) {
  const core::Trace& trace = timeline.trace();
  uint64_t count = 0, time_ns = 0;
  OffenderTally apis("api");
  for (const core::MemsetRecord& m : trace.memsets) {
    if (m.async) continue;
    ++count;
    const core::ApiCallRow* call = timeline.ApiFor(m.correlation_id);
    const uint64_t wait = call != nullptr ? call->end - std::min(call->end, call->start)
                                          : (m.end > m.start ? m.end - m.start : 0);
    time_ns += wait;
    apis.Add(call != nullptr ? std::string(timeline.ApiName(*call)) : std::string("(no API call)"), wait);
  }
  if (count == 0 || static_cast<double>(count) < thresholds.sync_memset_min_count) return;
  Finding f;
  f.rule_id = "memset.sync";
  f.recoverable_ns = time_ns;
  f.severity = SeverityFor(time_ns, timeline.span().length(), thresholds);
  f.headline = absl::StrCat(count, " synchronous memsets (", FormatDuration(time_ns), " in the calls)");
  f.Add("memsets", static_cast<double>(count), "count");
  f.Add("time_ns", static_cast<double>(time_ns), "ns");
  f.offenders = apis.Top(5);
  f.recommendation = "Use cudaMemsetAsync on the stream that uses the buffer.";
  findings.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> CopiesRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  SerializedCopies(timeline, thresholds, findings);
  PageableAsyncCopies(timeline, thresholds, findings);
  SyncCopies(timeline, thresholds, findings);
  SyncMemsets(timeline, thresholds, findings);
  return findings;
}

}  // namespace cuscope::analysis
