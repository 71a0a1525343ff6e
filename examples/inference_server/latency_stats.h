// The run's summary: request count, throughput and latency percentiles, printed as the line
//   requests=4000 throughput=400.0 req/s p50=2.310 ms p99=4.020 ms p999=5.100 ms errors=0
// or, for scripts, as one JSON object on one line.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_LATENCY_STATS_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_LATENCY_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace inference_server {

struct LatencySummary {
  uint64_t requests = 0;
  double duration_seconds = 0;
  double throughput_rps = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double p999_ms = 0;
  uint64_t errors = 0;
};

// The nearest-rank percentile (`fraction` in (0, 1]) of sorted values; 0 for none.
double NearestRankPercentile(const std::vector<double>& sorted, double fraction);

// Summarizes the latencies of the requests completed in `duration_seconds` of measurement.
LatencySummary SummarizeLatencies(std::vector<double> latencies_ms, double duration_seconds, uint64_t errors);

std::string SummaryLine(const LatencySummary& summary);
// With the result checksum, so that scripts can compare runs.
std::string SummaryJson(const LatencySummary& summary, uint64_t checksum);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_LATENCY_STATS_H_
