// Memsets in a trace, one v1::Memset message per memset.
//
// Encode: MemsetRecord -> v1::Memset. Decode: v1::Memset -> MemsetRecord, its device checked.
// The fields a memset shares with a copy: copy_and_memset_fields.h.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_MEMSET_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_MEMSET_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// `base_time_ns` is the chunk's base time.
void EncodeMemset(const MemsetRecord& memset, uint64_t base_time_ns, v1::Memset* out);

// DataLoss when the memset names a device id past kMaxDevices.
absl::Status DecodeMemset(const v1::Memset& memset, const ChunkContext& chunk, MemsetRecord* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_MEMSET_H_
