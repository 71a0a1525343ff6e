#include "lib/monitor/prometheus_exporter.h"

#include <exception>
#include <mutex>
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
  explicit TotalsCollectable(size_t max_kernel_labels) : totals_(max_kernel_labels) {}

  void Add(const IntervalFigures& interval) {
    std::lock_guard<std::mutex> lock(mutex_);
    totals_.Add(interval);
  }

  // Called on the server's threads: an exception must not reach them.
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      return MetricFamilies(totals_);
    } catch (const std::exception&) {
      return {};
    }
  }

 private:
  mutable std::mutex mutex_;
  RunningTotals totals_;
};

// civetweb reports through this callback; non-zero: "handled", it prints nothing itself.
int SwallowServerLog(const mg_connection* /*connection*/, const char* /*message*/) { return 1; }

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
                                                                              size_t max_kernel_labels) {
  absl::StatusOr<ListenAddress> listen = ParseListenAddress(address);
  if (!listen.ok()) return listen.status();
  const std::string where = listen->ToString();
  auto server = std::make_unique<Server>();
  int port = 0;
  try {
    CivetCallbacks callbacks;
    callbacks.log_message = SwallowServerLog;
    callbacks.log_access = SwallowServerLog;
    server->totals = std::make_shared<TotalsCollectable>(max_kernel_labels);
    server->exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", where, "num_threads", "2"}, &callbacks);
    server->exposer->RegisterCollectable(server->totals);
    const std::vector<int> ports = server->exposer->GetListeningPorts();
    if (ports.empty()) return absl::UnavailableError(absl::StrCat("metrics endpoint: not listening on ", where));
    port = ports.front();
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("metrics endpoint: cannot listen on ", where,
                                               " (port in use, or an address not on this machine?): ", e.what()));
  }
  ListenAddress bound = *std::move(listen);
  bound.port = port;
  return std::unique_ptr<PrometheusExporter>(new PrometheusExporter(std::move(server), port, bound.ToString()));
}

void PrometheusExporter::Publish(const IntervalFigures& interval) { server_->totals->Add(interval); }

}  // namespace cuscope::monitor
