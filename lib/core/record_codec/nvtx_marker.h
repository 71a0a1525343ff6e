// NVTX marks and range ends in a trace, one v1::NvtxMarker message each, naming an interned host
// thread and strings.
//
// Encode: NvtxActivity (with its interned ids) -> v1::NvtxMarker. Decode: v1::NvtxMarker -> NvtxRow.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_NVTX_MARKER_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_NVTX_MARKER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// `thread`, `name` and `domain` are the activity's interned ids (name 0: none; domain 0: the
// default domain); `base_time_ns` is the chunk's base time.
void EncodeNvtxMarker(const NvtxActivity& marker, uint32_t thread, uint32_t name, uint32_t domain,
                      uint64_t base_time_ns, v1::NvtxMarker* out);

// DataLoss when the marker names a thread or string `chunk.dict` does not define.
absl::Status DecodeNvtxMarker(const v1::NvtxMarker& marker, const ChunkContext& chunk, NvtxRow* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_NVTX_MARKER_H_
