// Request and batch scopes in a trace, one v1::RequestScope message each, naming an interned host
// thread and route string.
//
// Encode: RequestScopeActivity (with its interned ids) -> v1::RequestScope. Decode:
// v1::RequestScope -> RequestScopeRow.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_REQUEST_SCOPE_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_REQUEST_SCOPE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// `thread` and `route` are the interned ids of the scope's host thread and route (0: none);
// `base_time_ns` is the chunk's base time.
void EncodeRequestScope(const RequestScopeActivity& scope, uint32_t thread, uint32_t route, uint64_t base_time_ns,
                        v1::RequestScope* out);

// DataLoss when the row names a thread or string `chunk.dict` does not define, or a batch names
// more requests than a batch scope keeps.
absl::Status DecodeRequestScope(const v1::RequestScope& scope, const ChunkContext& chunk, RequestScopeRow* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_REQUEST_SCOPE_H_
