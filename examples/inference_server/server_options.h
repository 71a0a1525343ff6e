// The inference server's command line: what load to generate, how big the model is, whether
// requests run in cuscope request scopes, whether a bulk route interferes with them, and whether
// cuscope watches it.
//
//   example_inference_server --workers 4 --duration 10 --rate 500 --cuscope monitor --prometheus 9400
//   example_inference_server --rate 300 --interference --cuscope monitor --request-log requests.csv
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
  // Every request inside a cuscope::RequestScope of its route; off, none at all (to measure what
  // scopes cost).
  bool request_scopes = true;
  // Adds the route "bulk": `bulk_workers` threads, each with its own stream, serving back to back
  // requests that are one kernel each, filling every SM for `bulk_kernel_us`, so that the chat
  // requests' kernels queue behind them. Off, the server is as without it (the negative control).
  bool interference = false;
  int bulk_workers = 1;
  double bulk_kernel_us = 2000;
  // A CSV of every measured request's id, route and service time, written at the end; empty for
  // none.
  std::string request_log;
};

absl::StatusOr<ServerOptions> ParseServerOptions(int argc, char** argv);
std::string ServerUsage(const char* program);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_SERVER_OPTIONS_H_
