// The per-route figures of an interval's requests.
#include "lib/monitor/request_figures.h"

#include <algorithm>
#include <cmath>

namespace cuscope::monitor {

namespace {

// The value at rank ceil(q * n) (nearest rank) of sorted values.
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::max(1.0, std::ceil(q * static_cast<double>(sorted.size()))));
  return sorted[std::min(rank, sorted.size()) - 1];
}

}  // namespace

std::vector<RouteRequestFigures> FiguresByRoute(const std::vector<requests::RequestFigures>& done,
                                                const requests::RequestLedger& ledger) {
  std::vector<RouteRequestFigures> out;
  std::vector<std::vector<double>> spans, gpus, queues;
  for (const requests::RequestFigures& r : done) {
    const std::string_view route = ledger.RouteName(r.route);
    auto it = std::find_if(out.begin(), out.end(), [&](const RouteRequestFigures& f) { return f.route == route; });
    size_t at = static_cast<size_t>(it - out.begin());
    if (it == out.end()) {
      out.emplace_back().route = std::string(route);
      spans.emplace_back();
      gpus.emplace_back();
      queues.emplace_back();
    }
    RouteRequestFigures& f = out[at];
    ++f.requests;
    const double span = static_cast<double>(r.span_ns()) / 1e9;
    const double gpu = r.gpu_ns / 1e9;
    const double queue = static_cast<double>(r.queue_ns) / 1e9;
    f.span.Add(span);
    f.gpu.Add(gpu);
    f.queue.Add(queue);
    for (int c = 0; c < kHostCauseCount; ++c) f.idle[c].Add(static_cast<double>(r.idle_by_cause_ns[c]) / 1e9);
    spans[at].push_back(span);
    gpus[at].push_back(gpu);
    queues[at].push_back(queue);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    std::sort(spans[i].begin(), spans[i].end());
    std::sort(gpus[i].begin(), gpus[i].end());
    std::sort(queues[i].begin(), queues[i].end());
    RouteRequestFigures& f = out[i];
    f.span_p50 = Percentile(spans[i], 0.5);
    f.span_p99 = Percentile(spans[i], 0.99);
    f.span_max = spans[i].back();
    f.gpu_p50 = Percentile(gpus[i], 0.5);
    f.gpu_p99 = Percentile(gpus[i], 0.99);
    f.queue_p50 = Percentile(queues[i], 0.5);
    f.queue_p99 = Percentile(queues[i], 0.99);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.route < b.route; });
  return out;
}

}  // namespace cuscope::monitor
