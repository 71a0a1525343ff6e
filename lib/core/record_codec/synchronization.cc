#include "lib/core/record_codec/synchronization.h"

#include "lib/core/record_codec/columns.h"

namespace cuscope::core {

void EncodeSynchronization(const SyncRecord& r, uint64_t base_time_ns, v1::Synchronization* out) {
  out->set_start(static_cast<int64_t>(r.start - base_time_ns));
  out->set_duration(SpanDuration(r.start, r.end));
  out->set_type(r.type);
  out->set_context(r.context);
  out->set_stream(r.stream);
  out->set_event(r.event);
  out->set_correlation_id(r.correlation_id);
}

absl::Status DecodeSynchronization(const v1::Synchronization& s, const ChunkContext& chunk, SyncRecord* out) {
  out->start = chunk.base_time_ns + static_cast<uint64_t>(s.start());
  out->end = out->start + s.duration();
  out->type = s.type();
  out->context = s.context();
  out->stream = s.stream();
  out->event = s.event();
  out->correlation_id = s.correlation_id();
  return absl::OkStatus();
}

}  // namespace cuscope::core
