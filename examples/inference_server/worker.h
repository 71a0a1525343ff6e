// One worker thread's serving loop: take a request, run it inside a cuscope request scope named
// after the worker's route (cuscope/request.h), and note how long it took from arrival to result
// and how long it was served (the scope's span, as the server's own clock sees it).
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_WORKER_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_WORKER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "examples/inference_server/request_queue.h"

namespace inference_server {

// Runs the request `request_id` on the worker's GPU resources and returns once its result is on
// the host.
using ServeFunction = std::function<absl::Status(uint64_t request_id)>;

struct WorkerOptions {
  // The route the worker serves, as cuscope and the request log name it: one of a small fixed
  // set ("chat", "bulk"), a string that outlives the worker.
  const char* route = "";
  // --requests: each request inside a cuscope::RequestScope; off, none (what scopes cost).
  bool request_scopes = true;
  // --request-log: keep every measured request's service time.
  bool log_requests = false;
  // Requests that arrive earlier are served but not measured (warm-up).
  Clock::time_point measure_from;
};

struct ServedRequest {
  uint64_t id = 0;
  // From just before the request's scope opens to just after it closes, by steady_clock: what
  // cuscope's per-request span should match.
  double service_ms = 0;
};

struct WorkerResult {
  const char* route = "";
  // Latency of each request that arrived at or after the start of measurement, in ms.
  std::vector<double> latencies_ms;
  // The same requests' service times, with WorkerOptions::log_requests.
  std::vector<ServedRequest> served;
  // When the last of those requests completed (the end of the measured time).
  Clock::time_point last_completion;
  // The first failure; the worker stops at it.
  absl::Status status;
};

// Serves requests from `next_request` with `serve` until it returns nothing or a request fails.
WorkerResult RunWorker(const ServeFunction& serve, const std::function<std::optional<Request>()>& next_request,
                       const WorkerOptions& options);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_WORKER_H_
