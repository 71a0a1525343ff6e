#include "lib/analysis/tables.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/kernel_internals.h"
#include "lib/analysis/launch_sites.h"
#include "lib/analysis/summary_rows.h"
#include "lib/core/terminal_text.h"

namespace cuscope::analysis {
namespace {

using summary_rows::AddTimeRows;
using summary_rows::Duration;
using summary_rows::GroupStats;
using summary_rows::kTimeColumns;
using summary_rows::RangeName;
using summary_rows::Summary;
using summary_rows::SummarizeGroups;

std::string MemoryOperationName(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD: return "[CUDA memcpy Host-to-Device]";
    case v1::COPY_KIND_DTOH: return "[CUDA memcpy Device-to-Host]";
    case v1::COPY_KIND_DTOD: return "[CUDA memcpy Device-to-Device]";
    case v1::COPY_KIND_HTOH: return "[CUDA memcpy Host-to-Host]";
    case v1::COPY_KIND_PTOP: return "[CUDA memcpy Peer-to-Peer]";
    case v1::COPY_KIND_HTOA: return "[CUDA memcpy Host-to-Array]";
    case v1::COPY_KIND_ATOH: return "[CUDA memcpy Array-to-Host]";
    case v1::COPY_KIND_ATOA: return "[CUDA memcpy Array-to-Array]";
    case v1::COPY_KIND_ATOD: return "[CUDA memcpy Array-to-Device]";
    case v1::COPY_KIND_DTOA: return "[CUDA memcpy Device-to-Array]";
    default: return "[CUDA memcpy Unknown]";
  }
}

// Memory operations grouped by kind: one group per copy direction, one for memsets. Returns the
// group names and the summaries of durations (or of sizes).
std::pair<std::vector<std::string>, std::vector<Summary>> MemoryGroups(const Timeline& timeline, bool sizes) {
  const core::Trace& trace = timeline.trace();
  std::vector<std::string> names(v1::CopyKind_ARRAYSIZE + 1);
  for (int k = 0; k < v1::CopyKind_ARRAYSIZE; ++k) names[k] = MemoryOperationName(static_cast<v1::CopyKind>(k));
  names.back() = "[CUDA memset]";
  GroupStats stats;
  stats.Resize(names.size());
  std::vector<Summary> summaries = SummarizeGroups(stats, [&](auto&& emit) {
    for (const core::MemcpyRecord& m : trace.memcpys) {
      const int k = v1::CopyKind_IsValid(m.copy_kind) ? m.copy_kind : 0;
      emit(static_cast<size_t>(k), sizes ? m.bytes : Duration(m.start, m.end));
    }
    for (const core::MemsetRecord& m : trace.memsets) {
      emit(names.size() - 1, sizes ? m.bytes : Duration(m.start, m.end));
    }
  });
  return {std::move(names), std::move(summaries)};
}

// Tables that group by more than a name carry the other cells before the name, tab-separated,
// until AddTimeRows has sorted the rows: this splits the last cell back into `parts` cells (the
// name, last, may hold tabs of its own; the cells before it must not).
void SplitPackedLastCell(Table& table, size_t parts) {
  for (auto& row : table.rows) {
    std::string packed = std::move(row.back());
    row.pop_back();
    size_t begin = 0;
    for (size_t cell = 1; cell < parts; ++cell) {
      const size_t tab = packed.find('\t', begin);
      if (tab == std::string::npos) break;
      row.push_back(packed.substr(begin, tab - begin));
      begin = tab + 1;
    }
    row.push_back(packed.substr(begin));
  }
}

// A cell packed before the name: tabs become spaces (a trace's strings may hold anything).
std::string PackableCell(std::string text) {
  std::replace(text.begin(), text.end(), '\t', ' ');
  return text;
}

Table KernelTable(const Timeline& timeline, bool by_grid_block) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = by_grid_block ? "cuda_gpu_kern_gb_sum" : "cuda_gpu_kern_sum";
  table.title = by_grid_block ? "CUDA GPU kernel summary by grid and block" : "CUDA GPU kernel summary";
  table.columns = kTimeColumns;
  if (by_grid_block) {
    table.columns.insert(table.columns.end() - 0, {"GridXYZ", ColumnType::kText});
    table.columns.push_back({"BlockXYZ", ColumnType::kText});
  }
  table.columns.push_back({"Name", ColumnType::kText});
  // Signature -> group; signatures that differ only in fields the table ignores share a group.
  const core::Dictionary& dict = trace.dict;
  std::vector<uint32_t> group_of(dict.signature_count() + 1, 0);
  absl::flat_hash_map<std::string, uint32_t> group_by_key;
  std::vector<std::string> names(1);
  std::vector<std::pair<std::string, std::string>> dims(1);
  for (uint32_t sig = 1; sig <= dict.signature_count(); ++sig) {
    const v1::KernelSignature& s = dict.signature(sig);
    std::string grid, block;
    std::string key = absl::StrCat(s.name());
    if (by_grid_block) {
      grid = absl::StrCat(s.grid_x(), " ", s.grid_y(), " ", s.grid_z());
      block = absl::StrCat(s.block_x(), " ", s.block_y(), " ", s.block_z());
      absl::StrAppend(&key, "|", grid, "|", block);
    }
    auto [it, inserted] = group_by_key.try_emplace(key, names.size());
    if (inserted) {
      names.push_back(dict.kernel_name(sig));
      dims.emplace_back(grid, block);
    }
    group_of[sig] = it->second;
  }
  GroupStats stats;
  stats.Resize(names.size());
  const std::vector<Summary> summaries = SummarizeGroups(stats, [&](auto&& emit) {
    for (const core::KernelRow& k : trace.kernels) {
      if (!timeline.OnTimeline(k)) continue;
      emit(k.signature < group_of.size() ? group_of[k.signature] : 0, Duration(k.start, k.end));
    }
  });
  names[0] = "(unknown kernel)";
  if (by_grid_block) {
    // Carry grid/block in the name until the rows are sorted, then split them back out.
    for (size_t g = 0; g < names.size(); ++g) {
      names[g] = absl::StrCat(dims[g].first, "\t", dims[g].second, "\t", names[g]);
    }
  }
  AddTimeRows(std::move(names), summaries, table);
  if (by_grid_block) SplitPackedLastCell(table, 3);
  return table;
}

}  // namespace

Table KernelSummary(const Timeline& timeline) { return KernelTable(timeline, false); }

Table KernelStackSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  const core::Dictionary& dict = trace.dict;
  Table table;
  table.name = "cuda_kern_stack_sum";
  const std::string_view what =
      "CUDA kernels by launch site: the launches whose call stack was taken (--stacks), and the kernels of CUDA "
      "graphs by the stack that created their node, grouped by the program's innermost Python line, else the "
      "innermost frame outside the CUDA libraries and the launch code nvcc writes";
  table.columns = kTimeColumns;
  table.columns.push_back({"Launched From", ColumnType::kText});
  table.columns.push_back({"NVTX Range", ColumnType::kText});
  table.columns.push_back({"Name", ColumnType::kText});
  const LaunchStackIndex stacks(trace);
  const KernelNameSet kernels = KernelNames(dict);
  const NvtxRangeLocator nvtx(timeline);
  // Where and when a direct launch was made: its launch call, by correlation id.
  absl::flat_hash_map<uint64_t, std::pair<uint32_t, uint64_t>> call_of;  // correlation -> (thread, start)
  if (!trace.nvtx.empty()) {
    absl::flat_hash_map<uint64_t, bool> stacked;
    for (const core::LaunchStackRow& l : trace.launch_stacks) stacked[l.correlation_id] = true;
    for (const core::ApiCallRow& a : trace.api_calls) {
      if (a.correlation_id != 0 && stacked.contains(a.correlation_id)) call_of.try_emplace(a.correlation_id, a.thread, a.start);
    }
  }
  // (launch site, NVTX range name, kernel name) -> group; names carry the site and the range until
  // the rows are sorted. Sites group by their text: two call sites in one function are one place.
  absl::flat_hash_map<uint32_t, uint32_t> site_group;  // frame id -> first frame id with its text
  absl::flat_hash_map<std::string, uint32_t> frame_of_text;
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> group_of;
  std::vector<std::string> names(1, "\t\t(unknown kernel)");
  std::vector<uint32_t> kernel_group(trace.kernels.size(), 0);
  // Of the GPU kernel time on the timeline: all of it, the part with a launch site, and the part
  // with an NVTX range too (what "attributed" means in the title).
  uint64_t kernel_ns = 0, attributed_ns = 0, in_range_ns = 0;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const core::KernelRow& k = trace.kernels[i];
    if (!dict.has_signature(k.signature)) continue;
    const uint64_t time = timeline.OnTimeline(k) ? Duration(k.start, k.end) : 0;
    kernel_ns += time;
    const LaunchStackIndex::Origin origin = stacks.OriginOf(k);
    if (origin.stack == 0) continue;
    attributed_ns += time;
    const uint32_t frame = LaunchSiteFrame(dict, origin.stack, kernels);
    auto [known, new_frame] = site_group.try_emplace(frame, frame);
    if (new_frame) known->second = frame_of_text.try_emplace(FrameText(dict, frame), frame).first->second;
    const uint32_t site = known->second;
    uint32_t range = 0;
    if (origin.thread != 0) {
      range = nvtx.RangeAt(origin.thread, origin.time);  // the graph node's capture
    } else if (auto call = call_of.find(k.correlation_id); call != call_of.end()) {
      range = nvtx.RangeAt(call->second.first, call->second.second);
    }
    if (range != 0) in_range_ns += time;
    const uint32_t name = dict.signature(k.signature).name();
    auto [g, inserted] = group_of.try_emplace(std::make_tuple(site, range, name), static_cast<uint32_t>(names.size()));
    if (inserted) {
      names.push_back(absl::StrCat(PackableCell(FrameText(dict, site)), "\t",
                                   PackableCell(range != 0 ? RangeName(trace, range) : std::string()), "\t",
                                   dict.str(name)));
    }
    kernel_group[i] = g->second;
  }
  GroupStats stats;
  stats.Resize(names.size());
  const std::vector<Summary> summaries = SummarizeGroups(stats, [&](auto&& emit) {
    for (size_t i = 0; i < trace.kernels.size(); ++i) {
      const core::KernelRow& k = trace.kernels[i];
      if (kernel_group[i] == 0 || !timeline.OnTimeline(k)) continue;
      emit(kernel_group[i], Duration(k.start, k.end));
    }
  });
  AddTimeRows(std::move(names), summaries, table);
  SplitPackedLastCell(table, 3);
  const auto share = [&](uint64_t part) { return kernel_ns == 0 ? 0.0 : 100.0 * static_cast<double>(part) / kernel_ns; };
  table.title = absl::StrFormat("%s. %.1f%% of the GPU kernel time has a launch site, %.1f%% also an NVTX range",
                                absl::string_view(what.data(), what.size()), share(attributed_ns), share(in_range_ns));
  return table;
}
Table KernelGridBlockSummary(const Timeline& timeline) { return KernelTable(timeline, true); }

Table ApiSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = "cuda_api_sum";
  table.title = "CUDA API summary";
  table.columns = kTimeColumns;
  table.columns[2].name = "Num Calls";  // nsys's name in this report
  table.columns.push_back({"Name", ColumnType::kText});
  std::vector<std::string> names(trace.dict.function_count() + 1);
  for (uint32_t id = 1; id < names.size(); ++id) names[id] = std::string(core::DisplayApiName(trace.dict.function_name(id)));
  names[0] = "(unknown API)";
  GroupStats stats;
  stats.Resize(names.size());
  const std::vector<Summary> summaries = SummarizeGroups(stats, [&](auto&& emit) {
    for (const core::ApiCallRow& call : trace.api_calls) {
      emit(call.function < names.size() ? call.function : 0, Duration(call.start, call.end));
    }
  });
  AddTimeRows(std::move(names), summaries, table);
  return table;
}

Table NvtxSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = "nvtx_sum";
  table.title = "NVTX range summary";
  table.columns = kTimeColumns;
  table.columns.push_back({"Style", ColumnType::kText});  // nsys's: PushPop or StartEnd
  table.columns.push_back({"Range", ColumnType::kText});
  // One group per range name (string id; 0: a range without one) and style, in the order first seen.
  const auto key = [](const NvtxRange& r) { return (uint64_t{r.name} << 1) | (r.ended_elsewhere ? 1 : 0); };
  absl::flat_hash_map<uint64_t, size_t> group_of;
  std::vector<std::string> names;
  for (const ThreadTimeline& thread : timeline.threads()) {
    for (const NvtxRange& r : thread.ranges) {
      if (group_of.try_emplace(key(r), names.size()).second) {
        names.push_back(absl::StrCat(r.ended_elsewhere ? "StartEnd" : "PushPop", "\t", RangeName(trace, r.name)));
      }
    }
  }
  GroupStats stats;
  stats.Resize(names.size());
  const std::vector<Summary> summaries = SummarizeGroups(stats, [&](auto&& emit) {
    for (const ThreadTimeline& thread : timeline.threads()) {
      for (const NvtxRange& r : thread.ranges) emit(group_of.at(key(r)), Duration(r.begin, r.end));
    }
  });
  AddTimeRows(std::move(names), summaries, table);
  SplitPackedLastCell(table, 2);
  return table;
}

Table MemoryTimeSummary(const Timeline& timeline) {
  Table table;
  table.name = "cuda_gpu_mem_time_sum";
  table.title = "CUDA GPU memory operations by time";
  table.columns = kTimeColumns;
  table.columns[2].name = "Count";
  table.columns.push_back({"Operation", ColumnType::kText});
  auto [names, summaries] = MemoryGroups(timeline, false);
  AddTimeRows(std::move(names), summaries, table);
  return table;
}

Table MemorySizeSummary(const Timeline& timeline) {
  Table table;
  table.name = "cuda_gpu_mem_size_sum";
  table.title = "CUDA GPU memory operations by size (MB = 10^6 bytes)";
  table.columns = {{"Total (MB)", ColumnType::kDecimal}, {"Count", ColumnType::kInteger},
                   {"Avg (MB)", ColumnType::kDecimal},   {"Med (MB)", ColumnType::kDecimal},
                   {"Min (MB)", ColumnType::kDecimal},   {"Max (MB)", ColumnType::kDecimal},
                   {"StdDev (MB)", ColumnType::kDecimal}, {"Operation", ColumnType::kText}};
  auto [names, summaries] = MemoryGroups(timeline, true);
  std::vector<std::pair<Summary, std::string>> rows;
  for (size_t g = 0; g < names.size(); ++g) {
    if (summaries[g].count > 0) rows.emplace_back(summaries[g], names[g]);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first.total > b.first.total; });
  auto mb = [](double bytes) { return absl::StrFormat("%.3f", bytes / 1e6); };
  for (auto& [s, name] : rows) {
    table.rows.push_back({mb(static_cast<double>(s.total)), absl::StrCat(s.count), mb(s.avg), mb(s.median),
                          mb(static_cast<double>(s.min)), mb(static_cast<double>(s.max)), mb(s.stddev), name});
  }
  return table;
}

Table KernelMetricsSummary(const Timeline& timeline, const Thresholds& thresholds) {
  Table table;
  table.name = "kern_metrics";
  table.title = "Profiled kernels: throughput (% of peak), occupancy, top stall, roofline and verdict";
  table.columns = {{"Time (%)", ColumnType::kPercent},     {"Total Time (ns)", ColumnType::kInteger},
                   {"Profiled", ColumnType::kInteger},     {"Avg Dur (ns)", ColumnType::kDecimal},
                   {"SM (%)", ColumnType::kPercent},       {"Mem (%)", ColumnType::kPercent},
                   {"DRAM (%)", ColumnType::kPercent},     {"L2 (%)", ColumnType::kPercent},
                   {"L1 (%)", ColumnType::kPercent},       {"Ach Occ (%)", ColumnType::kPercent},
                   {"Theo Occ (%)", ColumnType::kPercent}, {"Occ Limiter", ColumnType::kText},
                   {"Top Stall", ColumnType::kText},       {"GFLOP/s", ColumnType::kDecimal},
                   {"AI (FLOP/B)", ColumnType::kDecimal},  {"Verdict", ColumnType::kText},
                   {"GridXYZ", ColumnType::kText},         {"BlockXYZ", ColumnType::kText},
                   {"Name", ColumnType::kText}};
  auto cell = [](const std::optional<double>& v, int decimals = 1) {
    return v && std::isfinite(*v) ? absl::StrFormat("%.*f", decimals, *v) : std::string();
  };
  for (const KernelVerdict& v : JudgeKernels(timeline, thresholds)) {
    std::string limiter;
    if (v.theoretical) {
      limiter = v.theoretical->limiter == OccupancyLimiter::kNone
                    ? std::string("none")
                    : std::string(OccupancyLimiterName(v.theoretical->limiter));
    }
    std::string stall;
    if (v.top_stall) {
      const StallShare& s = v.stalls[*v.top_stall];
      stall = absl::StrFormat("%s (%.0f%%)", s.reason, 100.0 * s.share);
    }
    std::optional<double> gflops;
    if (v.roofline.present && v.roofline.flop_per_second > 0) gflops = v.roofline.flop_per_second / 1e9;
    table.rows.push_back({
        absl::StrFormat("%.1f", 100.0 * v.kernel_time_share),
        absl::StrCat(v.gpu_time_ns),
        absl::StrCat(v.profiled_launches),
        cell(v.duration_ns),
        cell(v.sm_pct),
        cell(v.memory_pct),
        cell(v.dram_pct),
        cell(v.l2_pct),
        cell(v.l1_pct),
        cell(v.achieved_occupancy_pct),
        cell(v.theoretical ? std::optional<double>(v.theoretical->occupancy_pct) : std::nullopt),
        limiter,
        stall,
        cell(gflops),
        cell(v.roofline.intensity, 3),
        std::string(BottleneckName(v.bottleneck)),
        v.shape_known ? v.GridText() : std::string(),
        v.shape_known ? v.BlockText() : std::string(),
        v.name,
    });
  }
  return table;
}

}  // namespace cuscope::analysis
