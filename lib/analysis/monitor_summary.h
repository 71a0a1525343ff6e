// A monitor-mode trace (Chunk.monitor_intervals) summed over its intervals, per device: what
// `cuscope analyze` and `report` show for a run that kept figures instead of records, the
// `monitor_sum` and `monitor_kern_sum` reports, and the figures the monitor.gpu_idle rule judges.
#ifndef CUSCOPE_LIB_ANALYSIS_MONITOR_SUMMARY_H_
#define CUSCOPE_LIB_ANALYSIS_MONITOR_SUMMARY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/analysis/table.h"
#include "lib/analysis/timeline.h"
#include "lib/core/monitor_figures.h"

namespace cuscope::analysis {

struct MonitorDeviceSummary {
  uint32_t device = 0;
  uint64_t intervals = 0;
  uint64_t span_ns = 0;  // busy + idle: the intervals' summed length from the device's first operation on
  uint64_t busy_ns = 0;
  uint64_t idle_ns = 0;
  std::array<uint64_t, core::kHostCauseCount> idle_by_cause_ns{};
  uint64_t kernels = 0;
  uint64_t kernel_gpu_ns = 0;
  uint64_t copy_bytes = 0;
  uint64_t copy_ns = 0;
  // Kernels by name + grid + block over every interval, hottest first; an interval's "other"
  // kernels are summed in the row with an empty name.
  std::vector<core::KernelFigures> kernels_by_time;
};

struct MonitorSummary {
  std::vector<MonitorDeviceSummary> devices;  // by device id
  uint64_t intervals = 0;
  uint64_t span_ns = 0;  // first interval's start to last one's end
  uint64_t launch_calls = 0;
  uint64_t sync_calls = 0;
  uint64_t sync_wait_ns = 0;
  uint64_t records_dropped_by_cupti = 0;
  bool empty() const { return intervals == 0; }
};

MonitorSummary SummarizeMonitor(const core::Trace& trace);

// `monitor_sum`: per device, busy and idle shares (idle split by host cause) and rates.
Table MonitorSummaryTable(const Timeline& timeline);
// `monitor_kern_sum`: kernels by GPU time over the monitored run.
Table MonitorKernelTable(const Timeline& timeline);
// monitor_req_sum: requests per route over the run's intervals (request scopes in monitor mode):
// how many, their mean span, GPU time, queueing and idle time, and the worst interval's p99 span.
// No rows without requests.
Table MonitorRequestTable(const Timeline& timeline);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_MONITOR_SUMMARY_H_
