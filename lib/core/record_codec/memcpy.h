// Memory copies in a trace, one v1::Memcpy message per copy.
//
// Encode: MemcpyRecord -> v1::Memcpy. Decode: v1::Memcpy -> MemcpyRecord, its device checked.
// The fields a copy shares with a memset: copy_and_memset_fields.h.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_MEMCPY_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_MEMCPY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// `base_time_ns` is the chunk's base time.
void EncodeMemcpy(const MemcpyRecord& copy, uint64_t base_time_ns, v1::Memcpy* out);

// DataLoss when the copy names a device id past kMaxDevices.
absl::Status DecodeMemcpy(const v1::Memcpy& copy, const ChunkContext& chunk, MemcpyRecord* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_MEMCPY_H_
