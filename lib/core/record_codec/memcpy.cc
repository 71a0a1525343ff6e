#include "lib/core/record_codec/memcpy.h"

#include "lib/core/record_codec/copy_and_memset_fields.h"

namespace cuscope::core {

void EncodeMemcpy(const MemcpyRecord& r, uint64_t base_time_ns, v1::Memcpy* out) {
  EncodeCopyAndMemsetFields(r, base_time_ns, out);
  out->set_copy_kind(r.copy_kind);
  out->set_src_kind(r.src_kind);
  out->set_dst_kind(r.dst_kind);
}

absl::Status DecodeMemcpy(const v1::Memcpy& m, const ChunkContext& chunk, MemcpyRecord* out) {
  DecodeCopyAndMemsetFields(m, chunk.base_time_ns, out);
  out->copy_kind = m.copy_kind();
  out->src_kind = m.src_kind();
  out->dst_kind = m.dst_kind();
  if (!DeviceOk(out->device)) return BadDevice("copy row", out->device);
  return absl::OkStatus();
}

}  // namespace cuscope::core
