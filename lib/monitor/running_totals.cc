#include "lib/monitor/running_totals.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/core/kernel_selection.h"

namespace cuscope::monitor {

std::string KernelLabel(const std::string& mangled) {
  if (mangled.empty()) return "unknown";
  std::string label = core::FunctionBaseName(core::DemangleName(mangled));
  if (label.empty()) label = mangled;
  if (label.size() > kMaxKernelLabelLength) {
    label.resize(kMaxKernelLabelLength - 3);
    label += "...";
  }
  return label;
}

std::string DimensionsLabel(const std::array<uint32_t, 3>& dims) {
  return absl::StrCat(dims[0], "x", dims[1], "x", dims[2]);
}

RunningTotals::RunningTotals(size_t max_kernel_labels) : max_kernel_labels_(max_kernel_labels) {}

DeviceTotals& RunningTotals::Device(uint32_t device) {
  auto it = std::lower_bound(devices_.begin(), devices_.end(), device,
                             [](const DeviceTotals& d, uint32_t id) { return d.device < id; });
  if (it == devices_.end() || it->device != device) {
    it = devices_.insert(it, DeviceTotals{});
    it->device = device;
  }
  return *it;
}

// No memory of which kernel went where is needed: rows are never taken away, so a kernel whose
// label has a row finds it again, and one that found none never will.
KernelTotals& RunningTotals::RowOf(DeviceTotals& totals, const KernelFigures& kernel) const {
  std::string label = KernelLabel(kernel.name);
  std::string grid = DimensionsLabel(kernel.grid);
  std::string block = DimensionsLabel(kernel.block);
  for (KernelTotals& row : totals.kernel_rows) {
    if (row.label == label && row.grid == grid && row.block == block) return row;
  }
  if (totals.kernel_rows.size() >= max_kernel_labels_) return totals.other_kernels;
  return totals.kernel_rows.emplace_back(KernelTotals{std::move(label), std::move(grid), std::move(block), 0, 0});
}

void RunningTotals::AddDevice(const DeviceFigures& figures) {
  DeviceTotals& totals = Device(figures.device);
  totals.busy_ns += figures.busy_ns;
  totals.idle_ns += figures.idle_ns;
  for (int c = 0; c < kHostCauseCount; ++c) totals.idle_by_cause_ns[c] += figures.idle_by_cause_ns[c];
  totals.kernels += figures.kernels;
  totals.kernel_gpu_ns += figures.kernel_gpu_ns;
  for (const KernelFigures& kernel : figures.top_kernels) {
    KernelTotals& row = RowOf(totals, kernel);
    row.launches += kernel.launches;
    row.gpu_ns += kernel.gpu_ns;
  }
  totals.other_kernels.launches += figures.other_kernels.launches;
  totals.other_kernels.gpu_ns += figures.other_kernels.gpu_ns;
  for (const CopyFigures& copy : figures.copies) {
    auto it = std::find_if(totals.copies.begin(), totals.copies.end(), [&copy](const CopyFigures& t) {
      return t.kind == copy.kind && t.src_kind == copy.src_kind && t.dst_kind == copy.dst_kind;
    });
    if (it == totals.copies.end()) {
      it = totals.copies.insert(totals.copies.end(), CopyFigures{copy.kind, copy.src_kind, copy.dst_kind, 0, 0, 0});
    }
    it->count += copy.count;
    it->bytes += copy.bytes;
    it->gpu_ns += copy.gpu_ns;
  }
  totals.memsets += figures.memsets;
  totals.memset_bytes += figures.memset_bytes;
  totals.memset_ns += figures.memset_ns;
  const uint64_t span_ns = figures.busy_ns + figures.idle_ns;
  totals.utilization = span_ns == 0 ? 0.0 : static_cast<double>(figures.busy_ns) / static_cast<double>(span_ns);
  totals.utilization_bound = figures.busy_share_bound < 0 ? -1.0 : figures.busy_share_bound / 100;
  // A counter read less often than once an interval keeps its last reading between readings.
  for (const CounterFigures& counter : figures.counters) {
    if (counter.samples == 0) continue;
    totals.counters[counter.name] = counter;
  }
}

void RunningTotals::Add(const IntervalFigures& interval) {
  ++intervals_;
  for (const DeviceFigures& device : interval.devices) AddDevice(device);
  launch_calls_ += interval.launch_calls;
  sync_calls_ += interval.sync_calls;
  sync_wait_ns_ += interval.sync_wait_ns;
  records_dropped_by_cupti_ += interval.records_dropped_by_cupti;
  late_records_ += interval.late_records;
  collection_.estimated = interval.estimated;
  const uint64_t length = interval.end_ns > interval.start_ns ? interval.end_ns - interval.start_ns : 0;
  collection_.recorded_share =
      !interval.estimated ? 1.0 : length == 0 ? 0.0 : static_cast<double>(interval.observed_ns) / static_cast<double>(length);
  collection_.count_bound = interval.estimated ? interval.count_bound : 0;
  for (const RouteRequestFigures& r : interval.requests) {
    auto it = std::find_if(routes_.begin(), routes_.end(), [&](const RouteTotals& t) { return t.route == r.route; });
    if (it == routes_.end() && routes_.size() + 1 >= kMaxRequestRoutes) {
      it = std::find_if(routes_.begin(), routes_.end(), [](const RouteTotals& t) { return t.route == "other"; });
    }
    if (it == routes_.end()) {
      routes_.emplace_back().route = routes_.size() + 1 >= kMaxRequestRoutes ? std::string("other") : r.route;
      it = routes_.end() - 1;
    }
    it->requests += r.requests;
    it->span.Merge(r.span);
    it->gpu.Merge(r.gpu);
    it->queue.Merge(r.queue);
    for (int c = 0; c < kHostCauseCount; ++c) it->idle[c].Merge(r.idle[c]);
    it->latest = r;
  }
}

void RunningTotals::SetDutyCycle(double duty, double estimated_overhead, double overhead_budget) {
  collection_.duty_cycle = true;
  collection_.duty = duty;
  collection_.estimated_overhead = estimated_overhead;
  collection_.overhead_budget = overhead_budget;
}

}  // namespace cuscope::monitor
