// NVTX payloads in a trace, one v1::NvtxPayload message each, joined to their marker by id.
//
// Encode: NvtxPayloadRecord -> v1::NvtxPayload. Decode: v1::NvtxPayload -> NvtxPayloadRecord, with
// its checks (a known kind; extended data at most kMaxNvtxPayloadBytes).
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_NVTX_PAYLOAD_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_NVTX_PAYLOAD_H_

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

void EncodeNvtxPayload(const NvtxPayloadRecord& payload, v1::NvtxPayload* out);

absl::Status DecodeNvtxPayload(const v1::NvtxPayload& payload, const ChunkContext& chunk, NvtxPayloadRecord* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_NVTX_PAYLOAD_H_
