#include "examples/inference_server/worker.h"

#include "cuscope/request.h"

namespace inference_server {

WorkerResult RunWorker(const ServeFunction& serve, const std::function<std::optional<Request>()>& next_request,
                       const WorkerOptions& options) {
  WorkerResult result;
  result.route = options.route;
  result.last_completion = options.measure_from;
  while (std::optional<Request> request = next_request()) {
    absl::Status status;
    const Clock::time_point opened = Clock::now();
    {
      // The scope spans the request from the worker taking it to its result being on the host;
      // the clock reads on either side bracket it, so the server's service time and cuscope's
      // span cover the same work.
      std::optional<cuscope::RequestScope> scope;
      if (options.request_scopes) scope.emplace(request->id, options.route);
      status = serve(request->id);
    }
    const Clock::time_point done = Clock::now();
    if (!status.ok()) {
      result.status = status;
      break;
    }
    if (request->arrival < options.measure_from) continue;  // warm-up
    result.latencies_ms.push_back(std::chrono::duration<double, std::milli>(done - request->arrival).count());
    if (options.log_requests) {
      result.served.push_back({request->id, std::chrono::duration<double, std::milli>(done - opened).count()});
    }
    result.last_completion = done;
  }
  return result;
}

}  // namespace inference_server
