#include "lib/analysis/tables.h"

#include "lib/analysis/launch_sites.h"

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
#include "lib/core/terminal_text.h"

namespace cuscope::analysis {
namespace {

struct Summary {
  uint64_t count = 0, total = 0, min = 0, max = 0;
  double avg = 0, median = 0, stddev = 0;
};

// Sample statistics per group, as nsys prints them (median of an even count: mean of the two
// middle values; standard deviation with n-1), without a vector per group. Two passes over the
// values: `Count` gathers count, total, min and max; `Place` puts every value into one shared
// buffer, group after group (32-bit when every value fits), where each group's median is then
// selected in place. The caller produces the values twice; the buffer is freed by `Release`.
class GroupStats {
 public:
  size_t AddGroup() {
    groups_.emplace_back();
    return groups_.size() - 1;
  }
  void Resize(size_t groups) { groups_.resize(groups); }
  size_t size() const { return groups_.size(); }
  void Count(size_t g, uint64_t v) {
    State& s = groups_[g];
    if (s.count == 0 || v < s.min) s.min = v;
    if (v > s.max) s.max = v;
    ++s.count;
    s.total += v;
  }
  void Prepare() {
    uint64_t offset = 0, max = 0;
    for (State& s : groups_) {
      s.offset = s.fill = offset;
      offset += s.count;
      max = std::max(max, s.max);
      s.mean = s.count ? static_cast<double>(s.total) / static_cast<double>(s.count) : 0;
    }
    wide_ = max > UINT32_MAX;
    if (wide_) {
      wide_values_.resize(offset);
    } else {
      narrow_values_.resize(offset);
    }
  }
  void Place(size_t g, uint64_t v) {
    State& s = groups_[g];
    if (wide_) {
      wide_values_[s.fill++] = v;
    } else {
      narrow_values_[s.fill++] = static_cast<uint32_t>(v);
    }
    const double d = static_cast<double>(v) - s.mean;
    s.sum_sq += d * d;
  }
  Summary Result(size_t g) {
    const State& st = groups_[g];
    Summary s;
    s.count = st.count;
    if (st.count == 0) return s;
    s.total = st.total;
    s.min = st.min;
    s.max = st.max;
    s.avg = st.mean;
    s.median = wide_ ? MedianOf(wide_values_, st) : MedianOf(narrow_values_, st);
    if (st.count > 1) s.stddev = std::sqrt(st.sum_sq / static_cast<double>(st.count - 1));
    return s;
  }
  void Release() {
    std::vector<uint32_t>().swap(narrow_values_);
    std::vector<uint64_t>().swap(wide_values_);
  }

 private:
  struct State {
    uint64_t count = 0, total = 0, min = 0, max = 0, offset = 0, fill = 0;
    double mean = 0, sum_sq = 0;
  };
  template <typename T>
  static double MedianOf(std::vector<T>& values, const State& st) {
    // Selection, not a full sort: linear time on the millions of launches of one kernel.
    const auto first = values.begin() + static_cast<std::ptrdiff_t>(st.offset);
    const auto last = first + static_cast<std::ptrdiff_t>(st.count);
    const auto mid = first + static_cast<std::ptrdiff_t>(st.count / 2);
    std::nth_element(first, mid, last);
    const double upper = static_cast<double>(*mid);
    if (st.count % 2) return upper;
    return (static_cast<double>(*std::max_element(first, mid)) + upper) / 2.0;
  }
  std::vector<State> groups_;
  bool wide_ = false;
  std::vector<uint32_t> narrow_values_;
  std::vector<uint64_t> wide_values_;
};

// Runs both passes of `stats` over the values `generate` produces (it calls its argument with
// (group, value) for every value) and returns every group's summary.
template <typename Generate>
std::vector<Summary> SummarizeGroups(GroupStats& stats, Generate&& generate) {
  generate([&stats](size_t g, uint64_t v) { stats.Count(g, v); });
  stats.Prepare();
  generate([&stats](size_t g, uint64_t v) { stats.Place(g, v); });
  std::vector<Summary> out(stats.size());
  for (size_t g = 0; g < out.size(); ++g) out[g] = stats.Result(g);
  stats.Release();
  return out;
}

// One decimal, halves rounded away from zero as SQLite's round() (nsys's reports) rounds them.
std::string Dec(double v) { return absl::StrFormat("%.1f", std::round(v * 10.0) / 10.0); }

const std::vector<Column> kTimeColumns = {
    {"Time (%)", ColumnType::kPercent},  {"Total Time (ns)", ColumnType::kInteger},
    {"Instances", ColumnType::kInteger}, {"Avg (ns)", ColumnType::kDecimal},
    {"Med (ns)", ColumnType::kDecimal},  {"Min (ns)", ColumnType::kInteger},
    {"Max (ns)", ColumnType::kInteger},  {"StdDev (ns)", ColumnType::kDecimal}};

// The groups of a time summary in row order, largest total first (then by name), groups without
// values left out; and each one's share of all groups' total time, in percent.
struct TimeRowOrder {
  std::vector<size_t> groups;
  uint64_t grand_total = 0;
  std::string Percent(const Summary& s) const {
    return Dec(grand_total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(grand_total) : 0);
  }
};

TimeRowOrder OrderTimeRows(const std::vector<std::string>& names, const std::vector<Summary>& summaries) {
  TimeRowOrder order;
  for (size_t g = 0; g < summaries.size(); ++g) {
    if (summaries[g].count == 0) continue;
    order.grand_total += summaries[g].total;
    order.groups.push_back(g);
  }
  std::sort(order.groups.begin(), order.groups.end(), [&](size_t a, size_t b) {
    return summaries[a].total != summaries[b].total ? summaries[a].total > summaries[b].total : names[a] < names[b];
  });
  return order;
}

// Rows of a time summary, largest total first; groups without values are left out.
void AddTimeRows(std::vector<std::string> names, const std::vector<Summary>& summaries, Table& table) {
  const TimeRowOrder order = OrderTimeRows(names, summaries);
  for (size_t g : order.groups) {
    const Summary& s = summaries[g];
    table.rows.push_back({order.Percent(s), absl::StrCat(s.total), absl::StrCat(s.count), Dec(s.avg), Dec(s.median),
                          absl::StrCat(s.min), absl::StrCat(s.max), Dec(s.stddev), std::move(names[g])});
  }
}

// An NVTX range's name, or "(unnamed range)" for a range without one (or an id the trace lacks).
std::string RangeName(const core::Trace& trace, uint32_t id) {
  return id == 0 || id > trace.dict.string_count() ? "(unnamed range)" : trace.dict.str(id);
}

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

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

namespace {

// cuda_kern_exec_sum's group: the launching thread, the device, the API function, the kernel name.
struct ExecutionGroupKey {
  uint32_t thread = 0, device = 0, function = 0, name = 0;
  template <typename H>
  friend H AbslHashValue(H h, const ExecutionGroupKey& k) {
    return H::combine(std::move(h), k.thread, k.device, k.function, k.name);
  }
  friend bool operator==(const ExecutionGroupKey&, const ExecutionGroupKey&) = default;
};

}  // namespace

Table KernelExecutionSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = "cuda_kern_exec_sum";
  table.title =
      "CUDA kernel launch and execution, nsys's columns: T total (API start to kernel end), A API time, Q queue "
      "delay (kernel start - API end, when positive), K kernel time";
  // nsys's columns: the launching process and thread and the device first.
  table.columns = {{"PID", ColumnType::kInteger},
                   {"TID", ColumnType::kInteger},
                   {"DevId", ColumnType::kInteger},
                   {"Count", ColumnType::kInteger},
                   {"QCount", ColumnType::kInteger}};
  for (const char* what : {"T", "A", "Q", "K"}) {
    for (const char* stat : {"Avg", "Med", "Min", "Max", "StdDev"}) {
      const bool integer = std::string_view(stat) == "Min" || std::string_view(stat) == "Max";
      table.columns.push_back({absl::StrCat(what, stat, " (ns)"), integer ? ColumnType::kInteger : ColumnType::kDecimal});
    }
  }
  table.columns.push_back({"API Name", ColumnType::kText});
  table.columns.push_back({"Kernel Name", ColumnType::kText});
  // Groups by (thread, device, API function, kernel name), as nsys does.
  const core::Dictionary& dict = trace.dict;
  const size_t functions = dict.function_count() + 1;
  std::vector<uint32_t> name_of(dict.signature_count() + 1, 0);
  std::vector<uint32_t> device_of(dict.signature_count() + 1, 0);
  for (uint32_t sig = 1; sig <= dict.signature_count(); ++sig) {
    name_of[sig] = dict.signature(sig).name();
    device_of[sig] = dict.signature(sig).device();
  }
  constexpr uint32_t kNone = UINT32_MAX;
  using Key = ExecutionGroupKey;
  absl::flat_hash_map<Key, uint32_t> slot_of;
  std::vector<Key> keys;
  // Each kernel's group (creating it when new) and its call; kNone when the call is not in the trace.
  // A launch's group is looked up twice (counting, placing): kept per kernel from the first time.
  std::vector<uint32_t> group_of_kernel(trace.kernels.size(), kNone);
  auto group_of = [&](size_t i, const core::ApiCallRow*& call) -> uint32_t {
    const core::KernelRow& k = trace.kernels[i];
    call = timeline.ApiFor(k.correlation_id);
    if (call == nullptr) return kNone;
    if (group_of_kernel[i] != kNone) return group_of_kernel[i];
    const bool known = k.signature < name_of.size();
    const Key key{call->thread, known ? device_of[k.signature] : 0, call->function, known ? name_of[k.signature] : 0};
    const auto [it, added] = slot_of.try_emplace(key, static_cast<uint32_t>(keys.size()));
    if (added) keys.push_back(key);
    group_of_kernel[i] = it->second;
    return it->second;
  };
  // One counting pass and one placing pass for the four metrics together.
  GroupStats total_stats, api_stats, queue_stats, kernel_stats;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const core::KernelRow& k = trace.kernels[i];
    if (!timeline.OnTimeline(k)) continue;
    const core::ApiCallRow* call = nullptr;
    const uint32_t g = group_of(i, call);
    if (g == kNone) continue;
    if (g >= api_stats.size()) {
      total_stats.Resize(g + 1);
      api_stats.Resize(g + 1);
      queue_stats.Resize(g + 1);
      kernel_stats.Resize(g + 1);
    }
    total_stats.Count(g, Duration(call->start, std::max(call->end, k.end)));
    api_stats.Count(g, Duration(call->start, call->end));
    if (k.start > call->end) queue_stats.Count(g, k.start - call->end);
    kernel_stats.Count(g, Duration(k.start, k.end));
  }
  total_stats.Prepare();
  api_stats.Prepare();
  queue_stats.Prepare();
  kernel_stats.Prepare();
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const core::KernelRow& k = trace.kernels[i];
    if (!timeline.OnTimeline(k)) continue;
    const core::ApiCallRow* call = nullptr;
    const uint32_t g = group_of(i, call);
    if (g == kNone) continue;
    total_stats.Place(g, Duration(call->start, std::max(call->end, k.end)));
    api_stats.Place(g, Duration(call->start, call->end));
    if (k.start > call->end) queue_stats.Place(g, k.start - call->end);
    kernel_stats.Place(g, Duration(k.start, k.end));
  }
  auto results = [&](GroupStats& stats) {
    std::vector<Summary> out(keys.size());
    for (size_t g = 0; g < keys.size(); ++g) out[g] = stats.Result(g);
    stats.Release();
    return out;
  };
  const std::vector<Summary> total = results(total_stats);
  const std::vector<Summary> api = results(api_stats);
  const std::vector<Summary> queue = results(queue_stats);
  const std::vector<Summary> kernel = results(kernel_stats);
  std::vector<size_t> order(keys.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return kernel[a].count > kernel[b].count; });
  for (size_t g : order) {
    const Key& key = keys[g];
    const bool thread_known = key.thread > 0 && key.thread <= dict.thread_count();
    std::vector<std::string> row = {thread_known ? absl::StrCat(dict.thread(key.thread).pid()) : std::string(),
                                    thread_known ? absl::StrCat(dict.thread(key.thread).tid()) : std::string(),
                                    absl::StrCat(key.device), absl::StrCat(api[g].count),
                                    absl::StrCat(queue[g].count)};
    for (const Summary* x : {&total[g], &api[g], &queue[g], &kernel[g]}) {
      row.insert(row.end(), {Dec(x->avg), Dec(x->median), absl::StrCat(x->min), absl::StrCat(x->max), Dec(x->stddev)});
    }
    row.push_back(key.function < functions && key.function > 0
                      ? std::string(core::DisplayApiName(dict.function_name(key.function)))
                      : std::string("(unknown API)"));
    row.push_back(key.name ? dict.str(key.name) : std::string("(unknown kernel)"));
    table.rows.push_back(std::move(row));
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
