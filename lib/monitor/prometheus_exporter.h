// The metrics endpoint of monitor mode: an HTTP server (prometheus-cpp's exposer, on civetweb)
// in the host process that serves the running totals of the closed intervals in Prometheus' text
// format at /metrics (metric_families.h lists the metrics).
//
//   auto exporter = PrometheusExporter::Start("9400");   // loopback; "0.0.0.0:9400" to open it
//   if (!exporter.ok()) -> one "cuscope:" line, carry on without it
//   (*exporter)->Publish(interval);                       // each closed interval, any thread
//
// Errors are values: nothing thrown by the server library leaves Start, and the server's own log
// lines are kept off the host's stderr. Destroying the exporter stops the server and its threads.
//
// Any local user can connect to the endpoint (loopback included) and read it. Idle connections
// must not stop the scrapes: kWorkers threads serve connections, each dropping a peer whose request
// has not arrived within kRequestTimeoutMs, and at most kConnectionQueue accepted connections wait
// for a worker (more stay in the kernel's listen queue). A scrape waits behind at most
// (idle connections / kWorkers) request timeouts; the tests measure 2 and 224 idle connections.
#ifndef CUSCOPE_LIB_MONITOR_PROMETHEUS_EXPORTER_H_
#define CUSCOPE_LIB_MONITOR_PROMETHEUS_EXPORTER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/monitor/figures.h"
#include "lib/monitor/metric_families.h"
#include "lib/monitor/running_totals.h"

namespace cuscope::monitor {

class PrometheusExporter {
 public:
  static constexpr int kWorkers = 32;
  static constexpr int kRequestTimeoutMs = 500;
  static constexpr int kConnectionQueue = 64;

  // `address`: as ParseListenAddress takes it ("PORT", "ADDR:PORT", "[IPV6]:PORT"; port 0: a
  // free one). InvalidArgument for an address that does not parse, Unavailable when the server
  // cannot listen there (port in use, address not on this machine), both naming the address.
  // `process_labels` go on every series (metric_families.h).
  static absl::StatusOr<std::unique_ptr<PrometheusExporter>> Start(absl::string_view address,
                                                                   size_t max_kernel_labels = kDefaultKernelLabels,
                                                                   ProcessLabels process_labels = {});
  ~PrometheusExporter();
  PrometheusExporter(const PrometheusExporter&) = delete;
  PrometheusExporter& operator=(const PrometheusExporter&) = delete;

  // Adds a closed interval to what the next scrape shows. Thread-safe.
  void Publish(const IntervalFigures& interval);
  // Monitor mode's duty cycle now (duty_cycle.h): shares of the time and of the program's time.
  void PublishDutyCycle(double duty, double estimated_overhead, double overhead_budget);

  int port() const { return port_; }
  // "127.0.0.1:9400": where it listens, with the port it got.
  const std::string& address() const { return address_; }

 private:
  class Server;
  PrometheusExporter(std::unique_ptr<Server> server, int port, std::string address);

  std::unique_ptr<Server> server_;
  int port_;
  std::string address_;
};

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_PROMETHEUS_EXPORTER_H_
