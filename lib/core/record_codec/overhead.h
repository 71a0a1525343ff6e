// CUPTI's own overhead (buffer flushes, instrumentation, ...) in a trace, one v1::Overhead
// message each, naming an interned kind string and host thread.
//
// Encode: OverheadActivity (with its interned ids) -> v1::Overhead. Decode: v1::Overhead -> OverheadRow.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_OVERHEAD_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_OVERHEAD_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// `kind` and `thread` are the interned ids of the activity's kind and host thread;
// `base_time_ns` is the chunk's base time.
void EncodeOverhead(const OverheadActivity& overhead, uint32_t kind, uint32_t thread, uint64_t base_time_ns,
                    v1::Overhead* out);

// DataLoss when the row names a thread or string `chunk.dict` does not define.
absl::Status DecodeOverhead(const v1::Overhead& overhead, const ChunkContext& chunk, OverheadRow* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_OVERHEAD_H_
