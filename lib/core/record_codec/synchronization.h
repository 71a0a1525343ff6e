// Synchronizations in a trace (event, stream and context synchronizes, stream waits), one
// v1::Synchronization message each.
//
// Encode: SyncRecord -> v1::Synchronization. Decode: v1::Synchronization -> SyncRecord.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_SYNCHRONIZATION_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_SYNCHRONIZATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// `base_time_ns` is the chunk's base time.
void EncodeSynchronization(const SyncRecord& sync, uint64_t base_time_ns, v1::Synchronization* out);

// Always OK (a Status like every kind's decoder): every value is taken as it is (trace_reader.h).
absl::Status DecodeSynchronization(const v1::Synchronization& sync, const ChunkContext& chunk, SyncRecord* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_SYNCHRONIZATION_H_
