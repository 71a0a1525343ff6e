// The request and batch scopes of include/cuscope/request.h, on the program's threads.
//
// A scope costs its thread two reads of CUPTI's clock and two records queued beside the timed
// calls (TracePipeline::QueueRequestScope): one at its begin, so monitor mode can give the calls
// made inside it to it as they come, and one at its end, which the trace keeps. Nothing is
// allocated: each thread's open scopes (8 deep at most) and its batch's ids (kMaxBatchRequests)
// live in thread-local arrays, and routes are copied once into a fixed table of 64 names (the ones
// past it are "other"). Scopes are recorded while the capture records, as the calls are.
#ifndef CUSCOPE_LIB_CUPTI_REQUEST_SCOPES_H_
#define CUSCOPE_LIB_CUPTI_REQUEST_SCOPES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "lib/core/records.h"
#include "lib/cupti/cupti_api.h"

namespace cuscope::cupti {

// The fixed table of route names, shared by every session of the process (a route's name stays
// valid for the rest of the process, so records may point at it).
inline constexpr size_t kMaxRoutes = 64;
inline constexpr size_t kMaxRouteBytes = 63;
std::string_view InternRoute(const char* route);

class RequestScopes {
 public:
  // Called on the program's thread with a begin (end 0) or an end record.
  using Sink = std::function<void(const core::RequestScopeActivity&)>;
  // `recording`: whether the capture records now. `slow`, when set, is called on the program's
  // thread with each request scope (not a batch's) that took longer than `slow_ns` (flight mode's
  // request trigger), after its end record is queued.
  RequestScopes(CuptiApi& cupti, Sink sink, std::function<bool()> recording, uint64_t slow_ns = 0,
                std::function<void(const core::RequestScopeActivity&)> slow = nullptr);

  void Begin(uint64_t id, const char* route, const uint64_t* batch_requests, size_t batch_count, bool batch);
  // Closes the innermost open scope if it is of this kind (a request or a batch); otherwise nothing.
  void End(bool batch);

 private:
  CuptiApi& cupti_;
  const Sink sink_;
  const std::function<bool()> recording_;
  const uint64_t slow_ns_;
  const std::function<void(const core::RequestScopeActivity&)> slow_;
  const uint64_t generation_;  // a scope opened under another session is not this one's
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_REQUEST_SCOPES_H_
