#include "lib/analysis/thresholds.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace cuscope::analysis {

const std::vector<ThresholdInfo>& ThresholdTable() {
  static const std::vector<ThresholdInfo> kTable = {
      {"error_share", &Thresholds::error_share, "recoverable share of the span that makes a finding an error"},
      {"warning_share", &Thresholds::warning_share, "recoverable share of the span that makes a finding a warning"},
      {"min_recoverable_ms", &Thresholds::min_recoverable_ms, "findings recovering less than this are info"},
      {"gpu_busy_min_share", &Thresholds::gpu_busy_min_share, "device busy share below which idle is reported"},
      {"utilization_buckets", &Thresholds::utilization_buckets, "time buckets of the utilization profile"},
      {"utilization_low_share", &Thresholds::utilization_low_share, "busy share under which a bucket is low"},
      {"micro_gap_us", &Thresholds::micro_gap_us, "gaps shorter than this are counted as us-scale"},
      {"idle_startup_ops_share", &Thresholds::idle_startup_ops_share,
       "idle gaps before this share of a device's ops are start-up"},
      {"idle_setup_recurring_gaps", &Thresholds::idle_setup_recurring_gaps,
       "setup gaps after start-up that make setup a steady-state cost"},
      {"graph_node_gap_max_us", &Thresholds::graph_node_gap_max_us,
       "gaps between kernels of one graph launch shorter than this are the GPU's node-to-node latency"},
      {"short_kernel_us", &Thresholds::short_kernel_us, "kernels shorter than this are short"},
      {"launch_min_kernels", &Thresholds::launch_min_kernels, "kernels needed to judge launch overhead"},
      {"short_kernel_min_share", &Thresholds::short_kernel_min_share, "share of short kernels to report"},
      {"launch_gap_to_runtime_ratio", &Thresholds::launch_gap_to_runtime_ratio,
       "median gap / median short-kernel time to report"},
      {"launch_gap_max_us", &Thresholds::launch_gap_max_us, "longer gaps are not launch latency"},
      {"graph_launched_share", &Thresholds::graph_launched_share, "graph-launched share that drops graph advice"},
      {"sync_min_share", &Thresholds::sync_min_share, "thread time share in sync to report"},
      {"sync_min_calls", &Thresholds::sync_min_calls, "sync calls needed to report"},
      {"sync_min_rate_per_s", &Thresholds::sync_min_rate_per_s, "sync calls per second of thread time to report"},
      {"sync_min_caused_idle_share", &Thresholds::sync_min_caused_idle_share,
       "GPU idle caused by frequent syncs (share of thread time) that reports them however short each wait"},
      {"readback_max_bytes", &Thresholds::readback_max_bytes, "largest D2H copy counted as a read-back"},
      {"copy_min_share", &Thresholds::copy_min_share, "H2D+D2H share of the span to judge overlap"},
      {"copy_overlap_min_share", &Thresholds::copy_overlap_min_share, "copy time overlapped with kernels that is fine"},
      {"pageable_async_min_count", &Thresholds::pageable_async_min_count, "pageable async copies to report"},
      {"sync_copy_spare_h2d_bytes", &Thresholds::sync_copy_spare_h2d_bytes, "sync H2D copies this small are spared"},
      {"sync_copy_min_count", &Thresholds::sync_copy_min_count, "synchronous copies to report"},
      {"sync_memset_min_count", &Thresholds::sync_memset_min_count, "synchronous memsets to report"},
      {"stream_min_ops", &Thresholds::stream_min_ops, "operations a stream needs to be judged"},
      {"stream_interleave_min_share", &Thresholds::stream_interleave_min_share,
       "active-span overlap that makes two streams concurrent candidates"},
      {"stream_max_overlap_share", &Thresholds::stream_max_overlap_share, "busy overlap under which streams are serialized"},
      {"event_wait_min_share", &Thresholds::event_wait_min_share, "GPU time lost to event waits, as a share of the span, to report"},
      {"hot_kernels_top", &Thresholds::hot_kernels_top, "kernels in the hot list"},
      {"hot_kernel_min_share", &Thresholds::hot_kernel_min_share, "kernel-time share of the top kernel to report"},
      {"kernel_compute_bound_pct", &Thresholds::kernel_compute_bound_pct,
       "SM throughput (% of peak) from which a profiled kernel is compute-bound"},
      {"kernel_memory_bound_pct", &Thresholds::kernel_memory_bound_pct,
       "DRAM or L2 throughput (% of peak) from which a profiled kernel is memory-bound"},
      {"kernel_latency_bound_pct", &Thresholds::kernel_latency_bound_pct,
       "SM and memory throughput (% of peak) both below which a profiled kernel is latency-bound"},
      {"kernel_low_occupancy_pct", &Thresholds::kernel_low_occupancy_pct,
       "achieved occupancy (% of warp slots) below which occupancy is low"},
      {"kernel_latency_hiding_occupancy_pct", &Thresholds::kernel_latency_hiding_occupancy_pct,
       "achieved occupancy (%) below which a capped, latency-stalled kernel short of both roofs needs more warps"},
      {"gpu_counter_intervals", &Thresholds::gpu_counter_intervals,
       "intervals the window is split into to compare timeline busy time with sampled counters"},
      {"counter_disagree_points", &Thresholds::counter_disagree_points,
       "points between timeline kernel busy % and sampled SM active % that flag an interval"},
      {"throttle_min_kernel_share", &Thresholds::throttle_min_kernel_share,
       "share of kernel busy time under power/thermal clock slowdown to report"},
      {"comm_exposed_min_share", &Thresholds::comm_exposed_min_share,
       "share of a device's active span in communication with no compute beside it to report"},
      {"straggler_min_skew_us", &Thresholds::straggler_min_skew_us,
       "how much later than the others (us) a rank must start a collective to count as its late rank"},
      {"straggler_min_share", &Thresholds::straggler_min_share,
       "share of the matched collectives a rank must be late for to be named the straggler"},
      {"step_imbalance_min_share", &Thresholds::step_imbalance_min_share,
       "how much longer than the median rank (share) the slowest rank's step must take to report"},
      {"request_min_count", &Thresholds::request_min_count,
       "requests a route needs before its requests are judged"},
      {"request_queue_min_share", &Thresholds::request_queue_min_share,
       "share of its requests' span a route must spend queued on the GPU to report"},
      {"request_queue_min_us", &Thresholds::request_queue_min_us,
       "queueing (us) the median request of a route must have to report"},
      {"request_slow_ratio", &Thresholds::request_slow_ratio,
       "how many times the median request the p99 request of a route must take to report"},
      {"request_slow_min_excess_ms", &Thresholds::request_slow_min_excess_ms,
       "how much longer (ms) than the median request the p99 request must take to report"},
  };
  return kTable;
}

absl::Status ApplyThresholdOverride(std::string_view assignment, Thresholds* thresholds) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("threshold '", std::string(assignment), "' is not NAME=VALUE"));
  }
  const std::string_view name = assignment.substr(0, eq);
  const std::string value(assignment.substr(eq + 1));
  char* parse_end = nullptr;
  const double parsed = std::strtod(value.c_str(), &parse_end);
  if (value.empty() || parse_end != value.c_str() + value.size() || !std::isfinite(parsed) || parsed < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("threshold ", std::string(name), ": '", value, "' is not a non-negative number"));
  }
  for (const ThresholdInfo& info : ThresholdTable()) {
    if (info.name == name) {
      thresholds->*info.field = parsed;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown threshold '", std::string(name), "'"));
}

}  // namespace cuscope::analysis
