#include "lib/core/record_codec/nvtx_payload.h"

namespace cuscope::core {

void EncodeNvtxPayload(const NvtxPayloadRecord& p, v1::NvtxPayload* out) {
  out->set_id(p.id);
  out->set_kind(p.kind);
  if (p.kind == v1::NVTX_PAYLOAD_KIND_EXTENDED) {
    out->set_schema_id(p.schema_id);
    out->set_data(p.data.size() <= kMaxNvtxPayloadBytes ? p.data : p.data.substr(0, kMaxNvtxPayloadBytes));
  } else {
    out->set_bits(p.bits);
  }
}

absl::Status DecodeNvtxPayload(const v1::NvtxPayload& p, const ChunkContext& /*chunk*/, NvtxPayloadRecord* out) {
  if (!v1::NvtxPayloadKind_IsValid(p.kind())) return Corrupt("NVTX payload of an unknown kind");
  if (p.data().size() > kMaxNvtxPayloadBytes) return Corrupt("NVTX payload longer than 4 KiB");
  out->id = p.id();
  out->kind = p.kind();
  out->bits = p.bits();
  out->schema_id = p.schema_id();
  out->data = p.data();
  return absl::OkStatus();
}

}  // namespace cuscope::core
