// Monitor mode's running totals as Prometheus metric families: names, units and label sets by
// Prometheus' conventions (base units: seconds, bytes, ratios 0..1, hertz; counters end in
// _total). What the metrics endpoint serves at each scrape.
//
// Counters, per device (label device="0"):
//   cuscope_gpu_busy_seconds_total, cuscope_gpu_idle_seconds_total{cause},
//   cuscope_kernels_total, cuscope_kernel_gpu_seconds_total{kernel,grid,block},
//   cuscope_kernel_launches_total{kernel,grid,block} (kernel="other" without grid/block: the rest),
//   cuscope_copies_total / cuscope_copy_bytes_total / cuscope_copy_seconds_total{kind,src,dst},
//   cuscope_memsets_total, cuscope_memset_bytes_total, cuscope_memset_seconds_total.
// Counters, per process: cuscope_monitor_intervals_total, cuscope_launch_calls_total,
//   cuscope_sync_calls_total, cuscope_sync_wait_seconds_total,
//   cuscope_cupti_dropped_records_total, cuscope_late_records_total.
// Gauges, per device, the latest interval: cuscope_gpu_utilization_ratio and the GPU counters
//   (GpuCounterGauges(); any other counter as cuscope_gpu_counter{counter="<name>"}).
// A family with nothing to show yet is left out. Every series also carries the process's labels
// (ProcessLabels: rank, local_rank, job_id under a launcher).
#ifndef CUSCOPE_LIB_MONITOR_METRIC_FAMILIES_H_
#define CUSCOPE_LIB_MONITOR_METRIC_FAMILIES_H_

#include <string>
#include <utility>
#include <vector>

#include "lib/process/launch_place.h"
#include "lib/monitor/running_totals.h"
#include "prometheus/metric_family.h"

namespace cuscope::monitor {

// A GPU counter shown as its own gauge: the counter's mean over the interval (its maximum where
// `use_max`) times `scale`, the factor to the metric's unit.
struct GpuCounterGauge {
  const char* counter;  // the trace's counter name (lib/core/counter_names.h)
  const char* metric;
  const char* help;
  double scale;
  bool use_max;
};
const std::vector<GpuCounterGauge>& GpuCounterGauges();

// Labels every series of the process carries, after its own: `rank` (and `local_rank`, `job_id`)
// when the process runs in a distributed job, so that a fleet's dashboard compares ranks.
using ProcessLabels = std::vector<std::pair<std::string, std::string>>;

// The labels of a process in a distributed job: rank, local_rank, job_id, each when known; none
// outside a launcher.
ProcessLabels LaunchLabels(const process::LaunchPlace& place);

std::vector<prometheus::MetricFamily> MetricFamilies(const RunningTotals& totals,
                                                     const ProcessLabels& process_labels = {});

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_METRIC_FAMILIES_H_
