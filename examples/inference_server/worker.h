// One worker thread's serving loop: take a request, run it on the worker's ModelReplica, and note
// how long it took from arrival to result.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_WORKER_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_WORKER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "examples/inference_server/model.h"
#include "examples/inference_server/request_queue.h"

namespace inference_server {

struct WorkerResult {
  // Latency of each request that arrived at or after the start of measurement, in ms.
  std::vector<double> latencies_ms;
  // When the last of those requests completed (the end of the measured time).
  Clock::time_point last_completion;
  // The first failure; the worker stops at it.
  absl::Status status;
};

// Serves requests from `next_request` until it returns nothing or a request fails.
WorkerResult RunWorker(ModelReplica& replica, const std::function<std::optional<Request>()>& next_request,
                       Clock::time_point measure_from);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_WORKER_H_
