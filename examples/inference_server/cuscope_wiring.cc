#include "examples/inference_server/cuscope_wiring.h"

#include "absl/strings/str_cat.h"

namespace inference_server {

absl::StatusOr<std::unique_ptr<ServerProfiling>> ServerProfiling::Start(const ServerOptions& options) {
  if (options.cuscope == CuscopeMode::kOff) return std::unique_ptr<ServerProfiling>(new ServerProfiling(nullptr));
  cuscope::SessionOptions session_options;
  session_options.output = options.output;
  session_options.mode = options.cuscope == CuscopeMode::kMonitor  ? "monitor"
                         : options.cuscope == CuscopeMode::kFlight ? "flight"
                                                                   : "trace";
  session_options.prometheus = options.prometheus;
  auto session = std::make_unique<cuscope::Session>(session_options);
  if (!session->Start()) return absl::FailedPreconditionError(absl::StrCat("cuscope did not start: ", session->error()));
  return std::unique_ptr<ServerProfiling>(new ServerProfiling(std::move(session)));
}

absl::Status ServerProfiling::OpenTraceWindow(double seconds) {
  // 0 seconds: until the session stops.
  if (session_ == nullptr || !session_->BeginTraceWindow(seconds)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuscope trace window: ", session_ == nullptr ? "no session" : session_->error()));
  }
  return absl::OkStatus();
}

absl::Status ServerProfiling::Snapshot() {
  if (session_ == nullptr || !session_->Snapshot()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuscope snapshot: ", session_ == nullptr ? "no session" : session_->error()));
  }
  return absl::OkStatus();
}

absl::Status ServerProfiling::Stop() {
  if (session_ == nullptr || session_->Stop()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cuscope stop: ", session_->error()));
}

std::string ServerProfiling::Description() const {
  if (session_ == nullptr) return "";
  if (session_->output_path().empty()) return "cuscope recording (nothing written until a snapshot)";
  std::string d = absl::StrCat("cuscope writing ", session_->output_path());
  if (session_->prometheus_port() != 0) absl::StrAppend(&d, ", Prometheus on port ", session_->prometheus_port());
  return d;
}

}  // namespace inference_server
