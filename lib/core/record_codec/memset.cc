#include "lib/core/record_codec/memset.h"

#include "lib/core/record_codec/copy_and_memset_fields.h"

namespace cuscope::core {

void EncodeMemset(const MemsetRecord& r, uint64_t base_time_ns, v1::Memset* out) {
  EncodeCopyAndMemsetFields(r, base_time_ns, out);
  out->set_value(r.value);
  out->set_memory_kind(r.memory_kind);
}

absl::Status DecodeMemset(const v1::Memset& m, const ChunkContext& chunk, MemsetRecord* out) {
  DecodeCopyAndMemsetFields(m, chunk.base_time_ns, out);
  out->value = m.value();
  out->memory_kind = m.memory_kind();
  if (!DeviceOk(out->device)) return BadDevice("memset row", out->device);
  return absl::OkStatus();
}

}  // namespace cuscope::core
