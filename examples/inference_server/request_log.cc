#include "examples/inference_server/request_log.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace inference_server {

absl::Status WriteRequestLog(const std::string& path, const std::vector<const WorkerResult*>& workers) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return absl::UnavailableError(absl::StrCat("--request-log ", path, ": ", std::strerror(errno)));
  std::fputs("id,route,service_ms\n", file);
  for (const WorkerResult* worker : workers) {
    // Nanosecond resolution (the clock's), in milliseconds.
    for (const ServedRequest& r : worker->served) absl::FPrintF(file, "%u,%s,%.6f\n", r.id, worker->route, r.service_ms);
  }
  // A full disk shows at the latest when the buffer is flushed.
  const bool written = std::ferror(file) == 0;
  if (std::fclose(file) != 0 || !written) {
    return absl::UnavailableError(absl::StrCat("--request-log ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace inference_server
