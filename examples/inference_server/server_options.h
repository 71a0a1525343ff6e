// The inference server's command line: what load to generate, how big the model is, and whether
// cuscope watches it.
//
//   example_inference_server --workers 4 --duration 10 --rate 500 --cuscope monitor --prometheus 9400
//
// ParseServerOptions returns the options, or an InvalidArgument error naming the flag at fault;
// `--help` sets `help` (and nothing else is checked), ServerUsage is the text to print for it.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_SERVER_OPTIONS_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_SERVER_OPTIONS_H_

#include <string>

#include "absl/status/statusor.h"

namespace inference_server {

// Who watches the server: nobody (the plain server, no cuscope Session), a cuscope trace of every
// record, or cuscope's always-on monitor.
enum class CuscopeMode { kOff, kTrace, kMonitor, kFlight };

struct ServerOptions {
  bool help = false;
  int workers = 4;
  double duration_seconds = 10;
  // Open-loop arrivals per second (Poisson); 0 = closed loop, every worker as fast as it can.
  double rate = 0;
  // One request: `layers` x (GEMM hidden x hidden by hidden x batch, then bias + tanh). The
  // defaults take ~1-2 ms on an H200 (FP32 GEMMs of 8.6 GFLOP each).
  int batch = 256;
  int hidden = 4096;
  int layers = 8;
  // Served but not counted, before the measured `duration_seconds`.
  double warmup_seconds = 2;
  CuscopeMode cuscope = CuscopeMode::kOff;
  std::string prometheus;  // monitor mode: "PORT" or "ADDRESS:PORT"
  std::string output = "inference_server_%p";
  // Monitor mode: a trace window of this many seconds, opened halfway through the measured time.
  double trace_window_seconds = 0;
  // Flight mode: a snapshot of the recorder every this many seconds while serving (0 = none), to
  // measure what a snapshot costs the requests served meanwhile.
  double snapshot_every_seconds = 0;
  // Monitor mode: a trace window over the whole run, from the session's start to its stop, so the
  // same run has both the figures and every record (to check one against the other).
  bool trace_everything = false;
  // Seconds the session (and its Prometheus endpoint) stays up after the run, idle, before it
  // stops: time for the last intervals to close and be scraped.
  double linger_seconds = 0;
  bool json = false;
};

absl::StatusOr<ServerOptions> ParseServerOptions(int argc, char** argv);
std::string ServerUsage(const char* program);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_SERVER_OPTIONS_H_
