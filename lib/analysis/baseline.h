// The baseline of a run: the few numbers a tuning loop compares from one run to the next, at the
// top of every `cuscope analyze` report.
//
//   window         wall time of the TIMELINE capture window(s): the union of the windows the trace
//                  records, or, when it records none, its first to last recorded activity. Metric
//                  collection inside them (METRICS windows, profiled launch calls) is not the
//                  program's time: it is left out of the time the rates below are taken over.
//   kernel time    sum of the durations of the timeline's kernels inside the window(s) (launches
//                  replayed for metrics left out; concurrent kernels each count).
//   utilization    the union of kernel busy time inside the window(s) over the window time, per
//                  device; for the run, summed over devices and taken over window time x devices.
//   kernels        timeline kernels that ran inside the window(s), and launches per second of
//                  window time.
//
// Unlike the "GPU N: busy" line's busy share (over a device's active span, first GPU operation to
// last, with copies), the baseline counts everything the window holds, start-up and tear-down
// included: a change that shortens either shows up here. The kernels and kernel time of that line
// are the baseline's, with what ran outside the window given apart.
#ifndef CUSCOPE_LIB_ANALYSIS_BASELINE_H_
#define CUSCOPE_LIB_ANALYSIS_BASELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/analysis/interval_names.h"
#include "lib/analysis/table.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

struct DeviceBaseline {
  uint32_t device = 0;
  uint64_t kernels = 0;
  uint64_t kernel_ns = 0;
  uint64_t busy_ns = 0;     // union of its kernels inside the counted window time
  double utilization = 0;   // busy_ns / counted window time
  // From the timeline, for the "GPU N: busy" line: its active span's idle time outside the capture
  // windows, left out like metric collection.
  uint64_t unobserved_ns = 0;
  // Timeline kernels that ran outside the window(s) (launched inside, run after it closed: a deep
  // launch queue), and the kernel time outside them (theirs, and the parts of kernels the window
  // cut). The "GPU N" line gives them beside the window's own figures, so that both lines agree.
  uint64_t kernels_outside = 0;
  uint64_t kernel_ns_outside = 0;
};

struct Baseline {
  bool windows_recorded = false;  // false: the window is the trace's first to last activity
  uint64_t window_count = 0;
  IntervalSet windows;            // the window(s)
  uint64_t wall_ns = 0;           // their total length
  uint64_t metrics_ns = 0;        // metric collection inside them, left out of counted_ns
  uint64_t counted_ns = 0;        // wall_ns - metrics_ns: what the rates are taken over
  uint64_t kernels = 0;
  uint64_t kernel_ns = 0;
  uint64_t busy_ns = 0;           // summed over devices
  double utilization = 0;         // busy_ns / (counted_ns x devices)
  double launches_per_second = 0;
  std::vector<DeviceBaseline> devices;  // by device id; every device with GPU work on the timeline

  // The device's idle time outside the capture windows (DeviceBaseline::unobserved_ns); 0 for a
  // device without GPU work on the timeline.
  uint64_t UnobservedNs(uint32_t device) const;
  // The device's figures, or null for a device without GPU work on the timeline.
  const DeviceBaseline* Device(uint32_t device) const;
};

Baseline ComputeBaseline(const Timeline& timeline);

// "Baseline: 12.950 ms timeline window, ..." and, with more than one device, a line per device.
std::string RenderBaselineText(const Baseline& baseline);
// The same numbers as a table ("baseline"): a row for the run and one per device, for --format json.
Table BaselineTable(const Baseline& baseline);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_BASELINE_H_
