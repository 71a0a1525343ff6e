// What always-on (monitor) mode keeps instead of a per-record trace: figures per interval
// (default 1 s) and per device, folded from the same records a trace would hold. The trace's
// monitor records (Chunk.monitor_intervals) decoded: lib/monitor fills them, the trace keeps them
// (record_codec/monitor_interval.h), the analyzer and `cuscope status` read them.
//
// One interval's figures are final once the interval closes; the live exporter and the trace
// file (Chunk.monitor_intervals) both take closed intervals only, so a figure is never revised.
// Plain data: the aggregator that fills it (lib/monitor/interval_aggregator.h) and everything that reads it
// are tested on this machine with fabricated records.
#ifndef CUSCOPE_LIB_CORE_MONITOR_FIGURES_H_
#define CUSCOPE_LIB_CORE_MONITOR_FIGURES_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cuscope/v1/trace.pb.h"
#include "lib/core/api_names.h"

namespace cuscope::core {

// A kernel as the figures group it: name + grid + block, as `hot.kernels` and the top-down do.
struct KernelFigures {
  std::string name;  // mangled, as CUPTI gives it; "" for the "other" row
  std::array<uint32_t, 3> grid = {0, 0, 0};
  std::array<uint32_t, 3> block = {0, 0, 0};
  uint64_t launches = 0;
  uint64_t gpu_ns = 0;
};

// Copies of one direction between two kinds of memory.
struct CopyFigures {
  v1::CopyKind kind = v1::COPY_KIND_UNKNOWN;
  v1::MemoryKind src_kind = v1::MEMORY_KIND_UNKNOWN;
  v1::MemoryKind dst_kind = v1::MEMORY_KIND_UNKNOWN;
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t gpu_ns = 0;
};

// One GPU counter (PM sampling metric or NVML reading, by the names the trace uses:
// "sm__throughput.avg.pct_of_peak_sustained_elapsed", "nvml.power_w", ...) over the interval.
struct CounterFigures {
  std::string name;
  v1::CounterSource source = v1::COUNTER_SOURCE_UNKNOWN;
  uint64_t samples = 0;
  double mean = 0;
  double max = 0;
};

struct DeviceFigures {
  uint32_t device = 0;
  // busy: the union of the device's kernels, copies and memsets within the interval; idle: the
  // rest of the interval from the device's first operation on (the program's start-up before it
  // is neither), split by what the host was doing meanwhile (sums to idle_ns).
  uint64_t busy_ns = 0;
  uint64_t idle_ns = 0;
  std::array<uint64_t, kHostCauseCount> idle_by_cause_ns{};
  uint64_t kernels = 0;        // kernel executions that started in the interval
  uint64_t kernel_gpu_ns = 0;  // their summed durations (overlapping kernels each count)
  // The interval's hottest kernels by GPU time, hottest first (at most the aggregator's top N),
  // and everything else summed in `other_kernels` (name "").
  std::vector<KernelFigures> top_kernels;
  KernelFigures other_kernels;
  std::vector<CopyFigures> copies;  // one per (kind, src, dst) seen
  uint64_t memsets = 0;
  uint64_t memset_bytes = 0;
  uint64_t memset_ns = 0;
  std::vector<CounterFigures> counters;  // by name
  // Under a duty cycle (IntervalFigures::estimated): the windows' GPU time the busy and idle figures
  // were scaled from, and the busy share's 95% bound in points (-1: unknown, fewer than two windows).
  uint64_t observed_ns = 0;
  double busy_share_bound = -1;
};

// Requests (include/cuscope/request.h) per route, as Prometheus histograms: counts per bucket
// of seconds (upper bounds kRequestBucketSeconds, then +Inf), not cumulative, and their sum.
inline constexpr std::array<double, 15> kRequestBucketSeconds = {
    50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1.0, 2.5};
struct RequestHistogram {
  std::array<uint64_t, kRequestBucketSeconds.size() + 1> counts{};
  double sum_seconds = 0;
  void Add(double seconds);
  void Merge(const RequestHistogram& other);
  uint64_t count() const;
};

// The requests of one route (lib/requests/request_ledger.h says what each figure is) that ended
// in the interval: histograms, and this interval's exact percentiles (seconds) for `cuscope status`.
struct RouteRequestFigures {
  std::string route;  // "" when the requests named none
  uint64_t requests = 0;
  RequestHistogram span, gpu, queue;
  std::array<RequestHistogram, kHostCauseCount> idle;  // idle inside the span, by host cause
  double span_p50 = 0, span_p99 = 0, span_max = 0;
  double gpu_p50 = 0, gpu_p99 = 0;
  double queue_p50 = 0, queue_p99 = 0;
};

struct IntervalFigures {
  uint64_t start_ns = 0;  // CUPTI clock
  uint64_t end_ns = 0;
  std::vector<DeviceFigures> devices;  // by device id; a device appears once it has done anything
  // Host side, for the whole process.
  uint64_t launch_calls = 0;  // kernel and graph launch calls (runtime + driver)
  uint64_t sync_calls = 0;    // calls that wait for the GPU (stream/device/event synchronize)
  uint64_t sync_wait_ns = 0;  // time at least one thread spent inside one (threads waiting together count once)
  // Records CUPTI dropped for want of a buffer, counted when their buffer was handed over.
  uint64_t records_dropped_by_cupti = 0;
  // Records that arrived after their interval had closed, counted in this one instead.
  uint64_t late_records = 0;
  // Requests that ended in the interval, by route (none without request scopes).
  std::vector<RouteRequestFigures> requests;
  // Under a duty cycle (lib/monitor/sample_windows.h) the figures are estimates: recorded for
  // `observed_ns` of host time in `sample_windows` windows, counts and times scaled to the interval;
  // `count_bound` is the counts' 95% relative bound (-1: unknown). Full recording: false, 0, 0, 0.
  bool estimated = false;
  uint64_t observed_ns = 0;
  uint32_t sample_windows = 0;
  double count_bound = 0;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_MONITOR_FIGURES_H_
