// Running totals of monitor mode's figures: every closed IntervalFigures added in turn, so that an
// exporter can show counters that only ever grow (Prometheus computes rates from them) and
// gauges that hold the latest reading.
//
// Kernel rows are labelled for people and bounded for Prometheus: a kernel's label is its short
// base name ("ns::gemm", from the demangled name, at most kMaxKernelLabelLength characters) with
// its grid and block. Kernels whose label, grid and block agree share one row. A device gets at
// most `max_kernel_labels` rows, given in the order kernels are first seen, and a row, once
// given, is kept for good (so its counters stay monotonic); the time and launches of every other
// kernel, and of the aggregator's own "other" row, go to the device's "other" row.
//
// Not thread-safe: the exporter holds it under its lock.
#ifndef CUSCOPE_LIB_MONITOR_RUNNING_TOTALS_H_
#define CUSCOPE_LIB_MONITOR_RUNNING_TOTALS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/monitor/figures.h"

namespace cuscope::monitor {

inline constexpr size_t kDefaultKernelLabels = 20;
inline constexpr size_t kMaxKernelLabelLength = 120;
inline constexpr char kOtherKernelsLabel[] = "other";

// One kernel row of a device, or its "other" row (label "other", grid and block "").
struct KernelTotals {
  std::string label;
  std::string grid;   // "128x1x1"
  std::string block;  // "256x1x1"
  uint64_t launches = 0;
  uint64_t gpu_ns = 0;
};

struct DeviceTotals {
  uint32_t device = 0;
  // Monotonic.
  uint64_t busy_ns = 0;
  uint64_t idle_ns = 0;
  std::array<uint64_t, kHostCauseCount> idle_by_cause_ns{};
  uint64_t kernels = 0;
  uint64_t kernel_gpu_ns = 0;
  std::vector<KernelTotals> kernel_rows;  // labelled kernels, in the order they got their label
  KernelTotals other_kernels{kOtherKernelsLabel, "", "", 0, 0};
  std::vector<CopyFigures> copies;  // summed by (kind, src, dst), in the order first seen
  uint64_t memsets = 0;
  uint64_t memset_bytes = 0;
  uint64_t memset_ns = 0;
  // Gauges. utilization: busy / (busy + idle) in the latest interval, 0 for an empty one; under a
  // duty cycle, its 95% bound (a ratio, as utilization; -1: not estimated or unknown).
  double utilization = 0;
  double utilization_bound = -1;
  // By counter name: the figures of the latest interval that had readings of it.
  std::map<std::string, CounterFigures> counters;
};

// A route's requests over the whole run (cumulative histograms), and the percentiles of the latest
// interval that had requests of it. At most kMaxRequestRoutes routes; later ones count as "other".
inline constexpr size_t kMaxRequestRoutes = 64;
struct RouteTotals {
  std::string route;
  uint64_t requests = 0;
  RequestHistogram span, gpu, queue;
  std::array<RequestHistogram, kHostCauseCount> idle;
  RouteRequestFigures latest;  // its percentiles
};

// How the latest interval was recorded, and monitor mode's duty cycle now (duty_cycle.h).
struct CollectionTotals {
  bool estimated = false;     // the latest interval's figures are estimates from windows
  double recorded_share = 1;  // of the latest interval's time
  double count_bound = 0;     // its counts' 95% relative bound (-1: unknown)
  bool duty_cycle = false;    // a duty cycle runs (SetDutyCycle called)
  double duty = 1;
  double estimated_overhead = 0;  // of the program's time
  double overhead_budget = 0;     // 0: a fixed duty, no budget
};

class RunningTotals {
 public:
  explicit RunningTotals(size_t max_kernel_labels = kDefaultKernelLabels);

  // Adds one closed interval; intervals are expected in order, each once.
  void Add(const IntervalFigures& interval);

  const std::vector<DeviceTotals>& devices() const { return devices_; }  // by device id
  uint64_t intervals() const { return intervals_; }
  uint64_t launch_calls() const { return launch_calls_; }
  uint64_t sync_calls() const { return sync_calls_; }
  uint64_t sync_wait_ns() const { return sync_wait_ns_; }
  uint64_t records_dropped_by_cupti() const { return records_dropped_by_cupti_; }
  uint64_t late_records() const { return late_records_; }
  const std::vector<RouteTotals>& routes() const { return routes_; }  // in the order first seen
  const CollectionTotals& collection() const { return collection_; }
  // The duty cycle's state, as the session reports it (after each Add).
  void SetDutyCycle(double duty, double estimated_overhead, double overhead_budget);

 private:
  DeviceTotals& Device(uint32_t device);
  // The row a kernel's time goes to: its labelled row (made if there is room) or "other".
  KernelTotals& RowOf(DeviceTotals& totals, const KernelFigures& kernel) const;
  void AddDevice(const DeviceFigures& figures);

  const size_t max_kernel_labels_;
  std::vector<DeviceTotals> devices_;
  uint64_t intervals_ = 0;
  uint64_t launch_calls_ = 0;
  uint64_t sync_calls_ = 0;
  uint64_t sync_wait_ns_ = 0;
  uint64_t records_dropped_by_cupti_ = 0;
  uint64_t late_records_ = 0;
  std::vector<RouteTotals> routes_;
  CollectionTotals collection_;
};

// "ns::gemm" for "_ZN2ns4gemmIfEEvPfi"; names that do not demangle are kept as they are; at most
// kMaxKernelLabelLength characters ("..." ending a cut one); "unknown" for "".
std::string KernelLabel(const std::string& mangled);
// "128x1x1".
std::string DimensionsLabel(const std::array<uint32_t, 3>& dims);

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_RUNNING_TOTALS_H_
