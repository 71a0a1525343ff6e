#include "lib/core/record_codec/request_scope.h"

#include "lib/core/record_codec/columns.h"

namespace cuscope::core {

void EncodeRequestScope(const RequestScopeActivity& s, uint32_t thread, uint32_t route, uint64_t base_time_ns,
                        v1::RequestScope* out) {
  out->set_start(static_cast<int64_t>(s.start - base_time_ns));
  out->set_duration(SpanDuration(s.start, s.end));
  out->set_thread(thread);
  out->set_id(s.id);
  out->set_batch(s.batch);
  out->set_route(route);
  for (uint32_t i = 0; i < s.batch_count && i < kMaxBatchRequests; ++i) out->add_batch_requests(s.batch_requests[i]);
}

absl::Status DecodeRequestScope(const v1::RequestScope& s, const ChunkContext& chunk, RequestScopeRow* out) {
  out->start = chunk.base_time_ns + static_cast<uint64_t>(s.start());
  out->end = out->start + s.duration();
  out->thread = s.thread();
  out->id = s.id();
  out->batch = s.batch();
  out->route = s.route();
  if (!ThreadOk(chunk.dict, out->thread) || !StringOk(chunk.dict, out->route)) {
    return Corrupt("request scope uses an undefined thread or string");
  }
  if (static_cast<size_t>(s.batch_requests_size()) > kMaxBatchRequests) {
    return Corrupt("a batch scope names more requests than a batch keeps");
  }
  out->batch_requests.assign(s.batch_requests().begin(), s.batch_requests().end());
  return absl::OkStatus();
}

}  // namespace cuscope::core
