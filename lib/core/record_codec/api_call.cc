#include "lib/core/record_codec/api_call.h"

#include "absl/strings/str_cat.h"

namespace cuscope::core {

void ApiCallColumnEncoder::Append(const ApiActivity& a, uint32_t function, uint32_t thread, uint64_t base_time_ns,
                                  v1::ApiCallColumns* out) {
  const uint64_t row = spans_.Append(a.start, a.end, a.correlation_id, base_time_ns, out);
  out->add_function(function);
  out->add_thread(thread);
  AppendOptional(out->mutable_return_code(), row, a.return_code);
}

absl::Status DecodeApiCallColumns(const v1::ApiCallColumns& a, const ChunkContext& chunk,
                                  std::vector<ApiCallRow>* out) {
  SpanColumnDecoder spans(a, chunk.base_time_ns);
  const int n = spans.rows();
  if (!spans.LengthsOk() || a.function_size() != n || a.thread_size() != n || !OptionalColumnOk(a.return_code(), n)) {
    return Corrupt(absl::StrCat("API call columns of chunk ", chunk.sequence, " differ in length"));
  }
  out->resize(n);
  for (int i = 0; i < n; ++i) {
    ApiCallRow& r = (*out)[i];
    spans.Read(i, &r);
    r.function = a.function(i);
    r.thread = a.thread(i);
    if (r.function == 0 || r.function > chunk.dict.function_count() || !ThreadOk(chunk.dict, r.thread)) {
      return Corrupt("API call row uses an undefined function or thread");
    }
    r.return_code = OptionalAt(a.return_code(), i);
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
