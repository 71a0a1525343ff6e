#include "lib/monitor/prometheus_exporter.h"

#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "CivetServer.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/monitor/listen_address.h"
#include "lib/monitor/metric_families.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace cuscope::monitor {
namespace {

// The running totals, rendered afresh at each scrape (a scrape reads one consistent snapshot).
class TotalsCollectable : public prometheus::Collectable {
 public:
  TotalsCollectable(size_t max_kernel_labels, ProcessLabels process_labels)
      : totals_(max_kernel_labels), process_labels_(std::move(process_labels)) {}

  void Add(const IntervalFigures& interval) {
    std::lock_guard<std::mutex> lock(mutex_);
    totals_.Add(interval);
  }
  void SetDutyCycle(double duty, double estimated_overhead, double overhead_budget) {
    std::lock_guard<std::mutex> lock(mutex_);
    totals_.SetDutyCycle(duty, estimated_overhead, overhead_budget);
  }

  // Called on the server's threads: an exception must not reach them.
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      return MetricFamilies(totals_, process_labels_);
    } catch (const std::exception&) {
      return {};
    }
  }

 private:
  mutable std::mutex mutex_;
  RunningTotals totals_;
  const ProcessLabels process_labels_;
};

// civetweb reports through this callback; non-zero: "handled", it prints nothing itself. The last
// line it logs while a server starts says why a start failed ("cannot bind to ...: ..."), so it is
// kept for the error; later lines (one per failed request) are dropped.
std::mutex g_start_log_mu;
std::string* g_start_log = nullptr;  // g_start_log_mu; set only while a server starts

int KeepServerLog(const mg_connection* /*connection*/, const char* message) {
  std::lock_guard<std::mutex> lock(g_start_log_mu);
  if (g_start_log != nullptr && message != nullptr) *g_start_log = message;
  return 1;
}

// What civetweb said while starting a server, for the duration of one Start.
class StartLog {
 public:
  StartLog() {
    std::lock_guard<std::mutex> lock(g_start_log_mu);
    g_start_log = &text_;
  }
  ~StartLog() {
    std::lock_guard<std::mutex> lock(g_start_log_mu);
    g_start_log = nullptr;
  }
  std::string text() const {
    std::lock_guard<std::mutex> lock(g_start_log_mu);
    return text_;
  }

 private:
  std::string text_;
};

}  // namespace

// Declared in this order so that the server (and its threads) stops before the totals go.
class PrometheusExporter::Server {
 public:
  std::shared_ptr<TotalsCollectable> totals;
  std::unique_ptr<prometheus::Exposer> exposer;
};

PrometheusExporter::PrometheusExporter(std::unique_ptr<Server> server, int port, std::string address)
    : server_(std::move(server)), port_(port), address_(std::move(address)) {}

PrometheusExporter::~PrometheusExporter() = default;

absl::StatusOr<std::unique_ptr<PrometheusExporter>> PrometheusExporter::Start(absl::string_view address,
                                                                              size_t max_kernel_labels,
                                                                              ProcessLabels process_labels) {
  absl::StatusOr<ListenAddress> listen = ParseListenAddress(address);
  if (!listen.ok()) return listen.status();
  const std::string where = listen->ToString();
  auto server = std::make_unique<Server>();
  int port = 0;
  // Starts are serialized: civetweb's log callback has no user data to tell two apart.
  static std::mutex start_mu;
  std::lock_guard<std::mutex> one_start(start_mu);
  StartLog log;
  try {
    CivetCallbacks callbacks;
    callbacks.log_message = KeepServerLog;
    callbacks.log_access = KeepServerLog;
    server->totals = std::make_shared<TotalsCollectable>(max_kernel_labels, std::move(process_labels));
    server->exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", where, "num_threads", absl::StrCat(kWorkers), "request_timeout_ms",
                                 absl::StrCat(kRequestTimeoutMs), "connection_queue", absl::StrCat(kConnectionQueue),
                                 "enable_keep_alive", "no"},
        &callbacks);
    server->exposer->RegisterCollectable(server->totals);
    const std::vector<int> ports = server->exposer->GetListeningPorts();
    if (ports.empty()) return absl::UnavailableError(absl::StrCat("metrics endpoint: not listening on ", where));
    port = ports.front();
  } catch (const std::exception& e) {
    const std::string why = log.text();
    return absl::UnavailableError(absl::StrCat("metrics endpoint: cannot listen on ", where, ": ",
                                               why.empty() ? std::string(e.what()) : why));
  }
  ListenAddress bound = *std::move(listen);
  bound.port = port;
  return std::unique_ptr<PrometheusExporter>(new PrometheusExporter(std::move(server), port, bound.ToString()));
}

void PrometheusExporter::Publish(const IntervalFigures& interval) { server_->totals->Add(interval); }

void PrometheusExporter::PublishDutyCycle(double duty, double estimated_overhead, double overhead_budget) {
  server_->totals->SetDutyCycle(duty, estimated_overhead, overhead_budget);
}

}  // namespace cuscope::monitor
