// nvtx_gpu_proj_sum: each NVTX range projected onto the GPU work its calls launched (tables.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/summary_rows.h"
#include "lib/analysis/tables.h"

namespace cuscope::analysis {

using summary_rows::Dec;
using summary_rows::Duration;
using summary_rows::GroupStats;
using summary_rows::OrderTimeRows;
using summary_rows::RangeName;
using summary_rows::Summary;
using summary_rows::SummarizeGroups;
using summary_rows::TimeRowOrder;

namespace {

// A GPU operation's correlation id (0: none).
uint64_t OpCorrelation(const core::Trace& trace, OpRef op) {
  switch (op.kind()) {
    case OpKind::kKernel: return trace.kernels[op.index()].correlation_id;
    case OpKind::kMemcpy: return trace.memcpys[op.index()].correlation_id;
    case OpKind::kMemset: return trace.memsets[op.index()].correlation_id;
  }
  return 0;
}

// One thread's NVTX ranges with, per range, the latest end among it and the ranges before it: a
// range containing time t lies at or before the last range starting by t, and the scan back stops
// where no earlier range reaches t.
struct ThreadRanges {
  const std::vector<NvtxRange>* ranges = nullptr;
  std::vector<uint64_t> reach;  // max end of ranges[0..i]
  size_t first = 0;             // index of the thread's first range among all projections
};

}  // namespace

Table NvtxGpuProjectionSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = "nvtx_gpu_proj_sum";
  table.title =
      "NVTX range GPU projection summary: per range, from the start of the first GPU operation launched inside it "
      "to the end of the last (ranges that launched none are left out)";
  table.columns = {{"Time (%)", ColumnType::kPercent},         {"Total Proj Time (ns)", ColumnType::kInteger},
                   {"Total Range Time (ns)", ColumnType::kInteger}, {"Range Instances", ColumnType::kInteger},
                   {"Proj Avg (ns)", ColumnType::kDecimal},        {"Proj Med (ns)", ColumnType::kDecimal},
                   {"Proj Min (ns)", ColumnType::kInteger},        {"Proj Max (ns)", ColumnType::kInteger},
                   {"Proj StdDev (ns)", ColumnType::kDecimal},     {"Total GPU Ops", ColumnType::kInteger},
                   {"Avg GPU Ops", ColumnType::kDecimal},          {"Range", ColumnType::kText}};
  // Every range of every thread gets a projection slot; threads found by their dictionary id.
  absl::flat_hash_map<uint32_t, ThreadRanges> by_thread;
  size_t slots = 0;
  for (const ThreadTimeline& thread : timeline.threads()) {
    if (thread.ranges.empty()) continue;
    ThreadRanges& t = by_thread[thread.thread];
    t.ranges = &thread.ranges;
    t.first = slots;
    slots += thread.ranges.size();
    uint64_t reach = 0;
    for (const NvtxRange& r : thread.ranges) t.reach.push_back(reach = std::max(reach, r.end));
  }
  struct Projection {
    uint64_t begin = UINT64_MAX, end = 0, ops = 0;
  };
  std::vector<Projection> projections(slots);
  for (const DeviceTimeline& device : timeline.devices()) {
    for (OpRef op : device.ops) {
      const core::ApiCallRow* call = timeline.ApiFor(OpCorrelation(trace, op));
      if (call == nullptr) continue;
      auto it = by_thread.find(call->thread);
      if (it == by_thread.end()) continue;
      const ThreadRanges& t = it->second;
      const std::vector<NvtxRange>& ranges = *t.ranges;
      // Every range of the calling thread that holds the launch call's start (nested ones too).
      size_t i = static_cast<size_t>(std::upper_bound(ranges.begin(), ranges.end(), call->start,
                                                      [](uint64_t time, const NvtxRange& r) { return time < r.begin; }) -
                                     ranges.begin());
      const Interval x = timeline.OpInterval(op);
      while (i > 0 && t.reach[i - 1] >= call->start) {
        --i;
        if (ranges[i].end < call->start) continue;
        Projection& p = projections[t.first + i];
        p.begin = std::min(p.begin, x.begin);
        p.end = std::max(p.end, x.end);
        ++p.ops;
      }
    }
  }
  // Grouped by range name, in the order first seen.
  absl::flat_hash_map<uint32_t, size_t> group_of;
  std::vector<std::string> names;
  std::vector<uint64_t> range_time, ops;
  for (const auto& [thread, t] : by_thread) {
    for (size_t i = 0; i < t.ranges->size(); ++i) {
      if (projections[t.first + i].ops == 0) continue;
      const NvtxRange& r = (*t.ranges)[i];
      auto [it, inserted] = group_of.try_emplace(r.name, names.size());
      if (inserted) {
        names.push_back(RangeName(trace, r.name));
        range_time.push_back(0);
        ops.push_back(0);
      }
      range_time[it->second] += Duration(r.begin, r.end);
      ops[it->second] += projections[t.first + i].ops;
    }
  }
  GroupStats stats;
  stats.Resize(names.size());
  const std::vector<Summary> summaries = SummarizeGroups(stats, [&](auto&& emit) {
    for (const auto& [thread, t] : by_thread) {
      for (size_t i = 0; i < t.ranges->size(); ++i) {
        const Projection& p = projections[t.first + i];
        if (p.ops > 0) emit(group_of.at((*t.ranges)[i].name), Duration(p.begin, p.end));
      }
    }
  });
  const TimeRowOrder order = OrderTimeRows(names, summaries);
  for (size_t g : order.groups) {
    const Summary& s = summaries[g];
    table.rows.push_back({order.Percent(s), absl::StrCat(s.total), absl::StrCat(range_time[g]), absl::StrCat(s.count),
                          Dec(s.avg), Dec(s.median), absl::StrCat(s.min), absl::StrCat(s.max), Dec(s.stddev),
                          absl::StrCat(ops[g]), Dec(static_cast<double>(ops[g]) / static_cast<double>(s.count)),
                          names[g]});
  }
  return table;
}

}  // namespace cuscope::analysis
