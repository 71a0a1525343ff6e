#include "examples/inference_server/worker.h"

namespace inference_server {

WorkerResult RunWorker(ModelReplica& replica, const std::function<std::optional<Request>()>& next_request,
                       Clock::time_point measure_from) {
  WorkerResult result;
  result.last_completion = measure_from;
  while (std::optional<Request> request = next_request()) {
    absl::StatusOr<uint64_t> digest = replica.Serve(request->id);
    if (!digest.ok()) {
      result.status = digest.status();
      break;
    }
    const Clock::time_point done = Clock::now();
    if (request->arrival < measure_from) continue;  // warm-up
    result.latencies_ms.push_back(std::chrono::duration<double, std::milli>(done - request->arrival).count());
    result.last_completion = done;
  }
  return result;
}

}  // namespace inference_server
