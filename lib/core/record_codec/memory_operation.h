// Memory allocations and releases in a trace, one v1::MemoryOperation message each.
//
// Encode: MemoryOpRecord -> v1::MemoryOperation. Decode: v1::MemoryOperation -> MemoryOpRecord.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_MEMORY_OPERATION_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_MEMORY_OPERATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// `base_time_ns` is the chunk's base time.
void EncodeMemoryOperation(const MemoryOpRecord& op, uint64_t base_time_ns, v1::MemoryOperation* out);

// Always OK (a Status like every kind's decoder): every value is taken as it is, the device of an
// allocation included, which only `cuscope dump` prints (trace_reader.h).
absl::Status DecodeMemoryOperation(const v1::MemoryOperation& op, const ChunkContext& chunk, MemoryOpRecord* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_MEMORY_OPERATION_H_
