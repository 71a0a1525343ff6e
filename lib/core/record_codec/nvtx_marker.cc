#include "lib/core/record_codec/nvtx_marker.h"

namespace cuscope::core {

void EncodeNvtxMarker(const NvtxActivity& a, uint32_t thread, uint32_t name, uint32_t domain, uint64_t base_time_ns,
                      v1::NvtxMarker* out) {
  out->set_time(static_cast<int64_t>(a.time - base_time_ns));
  out->set_kind(a.kind);
  out->set_id(a.id);
  out->set_thread(thread);
  out->set_name(name);
  out->set_domain(domain);
}

absl::Status DecodeNvtxMarker(const v1::NvtxMarker& m, const ChunkContext& chunk, NvtxRow* out) {
  out->time = chunk.base_time_ns + static_cast<uint64_t>(m.time());
  out->kind = m.kind();
  out->id = m.id();
  out->thread = m.thread();
  out->name = m.name();
  out->domain = m.domain();
  if (!ThreadOk(chunk.dict, out->thread) || !StringOk(chunk.dict, out->name) || !StringOk(chunk.dict, out->domain)) {
    return Corrupt("NVTX row uses an undefined thread or string");
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
