// cuscope::RequestScope and cuscope::BatchScope: the request as the unit of a server's profile.
//
// Every CUDA call a thread makes inside a scope belongs to it: the kernels, copies and CUDA-graph
// replays it launches, and the GPU time they take. cuscope then tells, per request, its GPU time,
// its copies, how long its first kernel waited on the GPU behind other work (queueing), the time
// the GPU sat idle inside its span and what its thread was doing meanwhile, and its end-to-end
// span (docs/production.md, "Requests in a server").
//
//   void Handle(const Request& r) {
//     cuscope::RequestScope scope(r.id, "chat");     // route: a small, fixed set of names
//     ... launches, copies, cudaStreamSynchronize ...
//   }
//
// A server that batches: each request's scope spans its whole life (arrival to reply, on any
// thread), and the worker that runs the batch opens a BatchScope naming the requests it serves.
// A batch's kernels are shared among its requests in equal parts.
//
//   cuscope::RequestScope scope(id, "chat");   // on the thread that owns the request
//   ...
//   const uint64_t ids[] = {7, 8, 9};
//   { cuscope::BatchScope batch(ids, 3); ... the batch's launches ... }   // on the worker
//
// A scope costs two clock reads and no allocation; without an active session it costs a load.
// Scopes nest per thread (at most 8 deep); the innermost one owns a call. Routes past the first 64
// distinct names are recorded as "other". Nothing here throws or fails the program.
#ifndef CUSCOPE_REQUEST_H_
#define CUSCOPE_REQUEST_H_

#include <cstddef>
#include <cstdint>

#include "cuscope/cuscope.h"

namespace cuscope {

class RequestScope {
 public:
  explicit RequestScope(uint64_t request_id, const char* route = nullptr) {
    cuscope_request_begin(request_id, route);
  }
  ~RequestScope() { cuscope_request_end(); }
  RequestScope(const RequestScope&) = delete;
  RequestScope& operator=(const RequestScope&) = delete;
};

class BatchScope {
 public:
  // `request_ids` are copied (at most 256 kept); the array need not outlive the constructor.
  BatchScope(const uint64_t* request_ids, size_t count) { cuscope_batch_begin(request_ids, count); }
  ~BatchScope() { cuscope_batch_end(); }
  BatchScope(const BatchScope&) = delete;
  BatchScope& operator=(const BatchScope&) = delete;
};

}  // namespace cuscope

#endif  // CUSCOPE_REQUEST_H_
