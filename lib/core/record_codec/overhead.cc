#include "lib/core/record_codec/overhead.h"

#include "lib/core/record_codec/columns.h"

namespace cuscope::core {

void EncodeOverhead(const OverheadActivity& a, uint32_t kind, uint32_t thread, uint64_t base_time_ns,
                    v1::Overhead* out) {
  out->set_start(static_cast<int64_t>(a.start - base_time_ns));
  out->set_duration(SpanDuration(a.start, a.end));
  out->set_kind(kind);
  out->set_thread(thread);
  out->set_correlation_id(a.correlation_id);
}

absl::Status DecodeOverhead(const v1::Overhead& o, const ChunkContext& chunk, OverheadRow* out) {
  out->start = chunk.base_time_ns + static_cast<uint64_t>(o.start());
  out->end = out->start + o.duration();
  out->kind = o.kind();
  out->thread = o.thread();
  out->correlation_id = o.correlation_id();
  if (!ThreadOk(chunk.dict, out->thread) || !StringOk(chunk.dict, out->kind)) {
    return Corrupt("overhead row uses an undefined thread or string");
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
