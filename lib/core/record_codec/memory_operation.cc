#include "lib/core/record_codec/memory_operation.h"

namespace cuscope::core {

void EncodeMemoryOperation(const MemoryOpRecord& r, uint64_t base_time_ns, v1::MemoryOperation* out) {
  out->set_time(static_cast<int64_t>(r.time - base_time_ns));
  out->set_type(r.type);
  out->set_memory_kind(r.memory_kind);
  out->set_bytes(r.bytes);
  out->set_address(r.address);
  out->set_device(r.device);
  out->set_context(r.context);
  out->set_stream(r.stream);
  out->set_correlation_id(r.correlation_id);
  out->set_async(r.async);
}

absl::Status DecodeMemoryOperation(const v1::MemoryOperation& m, const ChunkContext& chunk, MemoryOpRecord* out) {
  out->time = chunk.base_time_ns + static_cast<uint64_t>(m.time());
  out->type = m.type();
  out->memory_kind = m.memory_kind();
  out->bytes = m.bytes();
  out->address = m.address();
  out->device = m.device();
  out->context = m.context();
  out->stream = m.stream();
  out->correlation_id = m.correlation_id();
  out->async = m.async();
  return absl::OkStatus();
}

}  // namespace cuscope::core
