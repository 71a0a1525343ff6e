#include "examples/inference_server/latency_stats.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace inference_server {

double NearestRankPercentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(fraction * double(sorted.size()));
  const size_t index = rank < 1 ? 0 : std::min(sorted.size(), size_t(rank)) - 1;
  return sorted[index];
}

LatencySummary SummarizeLatencies(std::vector<double> latencies_ms, double duration_seconds, uint64_t errors) {
  std::sort(latencies_ms.begin(), latencies_ms.end());
  LatencySummary s;
  s.requests = latencies_ms.size();
  s.duration_seconds = duration_seconds;
  s.throughput_rps = duration_seconds > 0 ? double(s.requests) / duration_seconds : 0;
  s.p50_ms = NearestRankPercentile(latencies_ms, 0.50);
  s.p99_ms = NearestRankPercentile(latencies_ms, 0.99);
  s.p999_ms = NearestRankPercentile(latencies_ms, 0.999);
  s.errors = errors;
  return s;
}

std::string SummaryLine(const LatencySummary& s) {
  return absl::StrFormat("requests=%u throughput=%.1f req/s p50=%.3f ms p99=%.3f ms p999=%.3f ms errors=%u",
                         s.requests, s.throughput_rps, s.p50_ms, s.p99_ms, s.p999_ms, s.errors);
}

std::string SummaryJson(const LatencySummary& s, uint64_t checksum) {
  return absl::StrFormat(
      "{\"requests\":%u,\"throughput_rps\":%.3f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"p999_ms\":%.4f,"
      "\"duration_s\":%.3f,\"errors\":%u,\"checksum\":\"%016x\"}",
      s.requests, s.throughput_rps, s.p50_ms, s.p99_ms, s.p999_ms, s.duration_seconds, s.errors, checksum);
}

}  // namespace inference_server
