// --request-log: every measured request as one CSV row,
//   id,route,service_ms
//   1042,chat,1.873210
// with the service time the server measured itself (worker.h), so that a script can hold it
// against cuscope's figure for the same request id.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_REQUEST_LOG_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_REQUEST_LOG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "examples/inference_server/worker.h"

namespace inference_server {

// Writes the requests of every worker in `workers` to `path` (replacing it), worker by worker.
absl::Status WriteRequestLog(const std::string& path, const std::vector<const WorkerResult*>& workers);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_REQUEST_LOG_H_
