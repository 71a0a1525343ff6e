#include "lib/analysis/nccl_summary.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/midpoint_median.h"

namespace cuscope::analysis {
namespace {

struct Row {
  std::vector<uint64_t> durations;
  uint64_t total_ns = 0;
  uint64_t calls = 0;
  uint64_t bytes = 0;           // of the kernels whose calls said
  uint64_t timed_with_bytes_ns = 0;  // those kernels' time
  uint64_t exposed_ns = 0;
  std::set<std::string> variants;
};

std::string Dec(double v) { return absl::StrFormat("%.1f", v); }

}  // namespace

Table NcclSummary(const Timeline& timeline) { return NcclSummary(timeline, BuildCommunication(timeline)); }

Table NcclSummary(const Timeline& timeline, const Communication& comm) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = "nccl_sum";
  table.title = "NCCL communication per collective: its kernels' GPU time (share of all kernel time), the calls NCCL's "
                "NVTX ranges name, bytes and bandwidth where their payloads say, and the time no compute ran beside it";
  table.columns = {{"Time (%)", ColumnType::kPercent},       {"Total Time (ns)", ColumnType::kInteger},
                   {"Kernels", ColumnType::kInteger},        {"Avg (ns)", ColumnType::kDecimal},
                   {"Med (ns)", ColumnType::kDecimal},       {"Min (ns)", ColumnType::kInteger},
                   {"Max (ns)", ColumnType::kInteger},       {"Calls", ColumnType::kInteger},
                   {"Bytes", ColumnType::kInteger},          {"Algorithm Bandwidth (GB/s)", ColumnType::kDecimal},
                   {"Bus Bandwidth (GB/s)", ColumnType::kDecimal}, {"Exposed (ns)", ColumnType::kInteger},
                   {"Collective", ColumnType::kText},        {"Variants", ColumnType::kText}};
  std::array<Row, kCollectiveCount> rows;
  uint64_t kernel_ns = 0;
  for (const DeviceTimeline& d : timeline.devices()) kernel_ns += d.kernel_time_ns;
  absl::flat_hash_map<uint32_t, std::string> variant_of;  // signature -> "RING LL", parsed once
  for (const CommunicationOp& op : comm.ops) {
    Row& r = rows[static_cast<size_t>(op.collective)];
    const uint64_t ns = op.end - op.start;
    r.durations.push_back(ns);
    r.total_ns += ns;
    if (op.bytes) {
      r.bytes += *op.bytes;
      r.timed_with_bytes_ns += ns;
    }
    r.exposed_ns += op.exposed_ns;
    const uint32_t signature = trace.kernels[op.kernel].signature;
    auto [known, added] = variant_of.try_emplace(signature);
    if (added) {
      const NcclKernelName name = ParseNcclKernelName(trace.dict.str(trace.dict.signature(signature).name()));
      known->second = name.algorithm;
      if (!name.protocol.empty()) absl::StrAppend(&known->second, name.algorithm.empty() ? "" : " ", name.protocol);
    }
    if (!known->second.empty()) r.variants.insert(known->second);
  }
  for (const NcclCall& call : comm.calls) {
    if (call.collective != Collective::kUnknown) ++rows[static_cast<size_t>(call.collective)].calls;
  }
  const int ranks = trace.header.session().world_size();
  std::vector<size_t> order;
  for (size_t c = 0; c < rows.size(); ++c) {
    if (!rows[c].durations.empty() || rows[c].calls > 0) order.push_back(c);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rows[a].total_ns != rows[b].total_ns ? rows[a].total_ns > rows[b].total_ns : a < b;
  });
  for (size_t c : order) {
    Row& r = rows[c];
    const auto collective = static_cast<Collective>(c);
    const size_t n = r.durations.size();
    const uint64_t min = n ? *std::min_element(r.durations.begin(), r.durations.end()) : 0;
    const uint64_t max = n ? *std::max_element(r.durations.begin(), r.durations.end()) : 0;
    std::string algorithm_bw, bus_bw;
    // Per-rank byte counts need the number of ranks for what the collective moved.
    if (r.timed_with_bytes_ns > 0 && (ranks > 0 || !BytesArePerRank(collective))) {
      const double seconds = static_cast<double>(r.timed_with_bytes_ns) / 1e9;
      const double algorithm = AlgorithmBytes(collective, r.bytes, ranks) / seconds / 1e9;
      algorithm_bw = Dec(algorithm);
      if (ranks > 0) bus_bw = Dec(algorithm * BusBandwidthFactor(collective, ranks));
    }
    table.rows.push_back({Dec(kernel_ns ? 100.0 * static_cast<double>(r.total_ns) / static_cast<double>(kernel_ns) : 0),
                          absl::StrCat(r.total_ns), absl::StrCat(n),
                          n ? Dec(static_cast<double>(r.total_ns) / static_cast<double>(n)) : "",
                          n ? Dec(MidpointMedian(r.durations)) : "", n ? absl::StrCat(min) : "", n ? absl::StrCat(max) : "",
                          absl::StrCat(r.calls), r.timed_with_bytes_ns > 0 ? absl::StrCat(r.bytes) : "", algorithm_bw,
                          bus_bw, absl::StrCat(r.exposed_ns), std::string(CollectiveName(collective)),
                          absl::StrJoin(r.variants, ", ")});
  }
  return table;
}

}  // namespace cuscope::analysis
