// Runtime and driver API calls in a trace: rows of ApiCallColumns naming an interned API function
// and host thread.
//
// Encode: ApiActivity (with its function and thread ids) -> a row of v1::ApiCallColumns.
// Decode: v1::ApiCallColumns -> ApiCallRow.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_API_CALL_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_API_CALL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/columns.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// Appends calls to one chunk's API call columns: starts and correlation ids delta-encoded, the
// return code as an optional column. Reset before each new chunk.
class ApiCallColumnEncoder {
 public:
  // `function` and `thread` are the call's interned ids; `base_time_ns` the chunk's base time.
  void Append(const ApiActivity& call, uint32_t function, uint32_t thread, uint64_t base_time_ns,
              v1::ApiCallColumns* out);
  void Reset() { spans_.Reset(); }

 private:
  SpanColumnEncoder spans_;
};

// Decodes a chunk's API call columns into `out` (replacing its contents). DataLoss when the
// columns differ in length or a row names a function or thread `chunk.dict` does not define.
absl::Status DecodeApiCallColumns(const v1::ApiCallColumns& columns, const ChunkContext& chunk,
                                  std::vector<ApiCallRow>* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_API_CALL_H_
