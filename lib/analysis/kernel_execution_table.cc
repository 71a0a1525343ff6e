// cuda_kern_exec_sum: kernels by launch site with their launch and queue times (tables.h).
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
using summary_rows::Summary;

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

}  // namespace cuscope::analysis
