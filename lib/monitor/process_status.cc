#include "lib/monitor/process_status.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace cuscope::monitor {

void FillProcessStatus(const RunningTotals& totals, v1::ProcessStatus* status) {
  status->set_intervals(totals.intervals());
  status->set_launch_calls(totals.launch_calls());
  status->set_sync_calls(totals.sync_calls());
  status->set_sync_wait_ns(totals.sync_wait_ns());
  status->set_records_dropped_by_cupti(totals.records_dropped_by_cupti());
  status->set_latest_estimated(totals.collection().estimated);
  status->set_latest_recorded_share(totals.collection().recorded_share);
  status->set_latest_count_bound(totals.collection().count_bound);
  status->clear_devices();
  status->clear_top_kernels();
  status->clear_routes();
  for (const RouteTotals& r : totals.routes()) {
    v1::RouteStatus* out = status->add_routes();
    out->set_route(r.route);
    out->set_requests(r.requests);
    out->set_span_p50(r.latest.span_p50);
    out->set_span_p99(r.latest.span_p99);
    out->set_span_max(r.latest.span_max);
    out->set_gpu_p50(r.latest.gpu_p50);
    out->set_gpu_p99(r.latest.gpu_p99);
    out->set_queue_p50(r.latest.queue_p50);
    out->set_queue_p99(r.latest.queue_p99);
  }
  std::vector<std::pair<uint32_t, const KernelTotals*>> rows;
  for (const DeviceTotals& d : totals.devices()) {
    v1::DeviceStatus* out = status->add_devices();
    out->set_device(d.device);
    out->set_busy_ns(d.busy_ns);
    out->set_idle_ns(d.idle_ns);
    out->set_utilization(d.utilization);
    out->set_utilization_bound(totals.collection().estimated ? d.utilization_bound : -1);
    out->set_kernels(d.kernels);
    out->set_kernel_gpu_ns(d.kernel_gpu_ns);
    for (const KernelTotals& k : d.kernel_rows) rows.emplace_back(d.device, &k);
    if (d.other_kernels.launches > 0) rows.emplace_back(d.device, &d.other_kernels);
  }
  // Most time first; ties by device, then label, so the list is the same from call to call.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.second->gpu_ns != b.second->gpu_ns) return a.second->gpu_ns > b.second->gpu_ns;
    if (a.first != b.first) return a.first < b.first;
    return a.second->label < b.second->label;
  });
  if (rows.size() > kStatusTopKernels) rows.resize(kStatusTopKernels);
  for (const auto& [device, k] : rows) {
    v1::KernelStatus* out = status->add_top_kernels();
    out->set_device(device);
    out->set_label(k->grid.empty() ? k->label : absl::StrCat(k->label, " ", k->grid, " ", k->block));
    out->set_launches(k->launches);
    out->set_gpu_ns(k->gpu_ns);
  }
}

}  // namespace cuscope::monitor
