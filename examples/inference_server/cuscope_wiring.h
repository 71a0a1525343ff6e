// The server's cuscope Session, as --cuscope asks: none (off), a trace of every record, or the
// always-on monitor (optionally served to Prometheus, with a trace window on demand).
//
//   auto profiling = ServerProfiling::Start(options);   // before the model touches the GPU
//   ... serve ...;  (*profiling)->OpenTraceWindow(5);   // monitor mode only
//   (*profiling)->Stop();
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_CUSCOPE_WIRING_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_CUSCOPE_WIRING_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cuscope/session.h"
#include "examples/inference_server/server_options.h"

namespace inference_server {

class ServerProfiling {
 public:
  // Starts the session (nothing with --cuscope off). An error says why cuscope refused to start.
  static absl::StatusOr<std::unique_ptr<ServerProfiling>> Start(const ServerOptions& options);

  // Monitor mode: every record goes to the trace file as well for `seconds`.
  absl::Status OpenTraceWindow(double seconds);
  // Flight mode: a snapshot of the last seconds to OUTPUT_snapshotN.cuscope, written by cuscope's
  // own thread.
  absl::Status Snapshot();
  // Ends the session, writing what is left (nothing with --cuscope off).
  absl::Status Stop();

  // What the session is doing, for the server's start-up message: empty with --cuscope off.
  std::string Description() const;

 private:
  explicit ServerProfiling(std::unique_ptr<cuscope::Session> session) : session_(std::move(session)) {}
  std::unique_ptr<cuscope::Session> session_;  // null with --cuscope off
};

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_CUSCOPE_WIRING_H_
