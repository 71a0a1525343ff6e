// Every threshold the rules use, in one place, with its default and the reason for it.
// `cuscope analyze --threshold NAME=VALUE` overrides any of them by the name listed in
// `ThresholdTable()`.
#ifndef CUSCOPE_LIB_ANALYSIS_THRESHOLDS_H_
#define CUSCOPE_LIB_ANALYSIS_THRESHOLDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace cuscope::analysis {

struct Thresholds {
  // ---- Severity, shared by all rules -----------------------------------------------------------
  // A finding whose estimated recoverable time is at least this share of the analyzed span is an
  // error; at least `warning_share`, a warning; anything smaller is reported as info.
  double error_share = 0.25;
  double warning_share = 0.05;
  // ... and whatever its share, a finding that could recover less than this is info: on a capture
  // of a few hundred microseconds, 60% idle is 50 us nobody can act on.
  double min_recoverable_ms = 1.0;

  // ---- gpu.idle ---------------------------------------------------------------------------------
  // A device busy less than this share of its active span (first GPU op to last) is reported.
  // 0.8: below it a fifth of the GPU is being wasted, well above measurement noise.
  double gpu_busy_min_share = 0.8;
  // Time buckets the active span is split into for the utilization profile (nsys uses 30, which
  // hides short stalls; 100 shows a stall of 1% of the run).
  double utilization_buckets = 100;
  // A bucket busier than this share is not "low".
  double utilization_low_share = 0.5;
  // Gaps shorter than this are "µs-scale": launch latency rather than a host stall.
  double micro_gap_us = 100;
  // Idle gaps that end before this share of the device's operations has started are start-up
  // (loading data, building models, warming up after an init kernel), not the steady state.
  double idle_startup_ops_share = 0.01;
  // A gap in which setup calls (graph construction/instantiation, stream capture, module loading)
  // are the host's main CUDA activity is setup. Setup gaps are left out of the recoverable time
  // unless at least this many of them occur after start-up (setup repeated in the loop, such as a
  // graph instantiated every step).
  double idle_setup_recurring_gaps = 3;
  // A gap shorter than this between two kernels of one CUDA graph launch is the GPU's own latency
  // from one graph node to the next (about 0.1-0.3 us on the H200), not something the host did:
  // reported, but left out of the recoverable time and of the severity. Longer gaps inside a graph
  // (host nodes, event waits) count as usual.
  double graph_node_gap_max_us = 2;

  // ---- launch.overhead --------------------------------------------------------------------------
  // A kernel shorter than this is "short": close to the ~4-5 µs it costs to launch one.
  double short_kernel_us = 20;
  // Reported when at least this many kernels ...
  double launch_min_kernels = 100;
  // ... of which at least this share are short ...
  double short_kernel_min_share = 0.5;
  // ... are separated by a median gap at least this fraction of their median run time.
  double launch_gap_to_runtime_ratio = 0.25;
  // Gaps longer than this are not launch latency (the host was doing something else).
  double launch_gap_max_us = 1000;
  // When at least this share of the short kernels already come from CUDA graphs, the advice is
  // fusion, not graphs.
  double graph_launched_share = 0.5;

  // ---- sync.points ------------------------------------------------------------------------------
  // A host thread spending at least this share of its active time in synchronization calls or
  // synchronous copies is reported.
  double sync_min_share = 0.10;
  // ... and making at least this many such calls (one final sync at exit is normal) ...
  double sync_min_calls = 10;
  // ... at least this many per second of the thread's active time. A thread syncing at the end of
  // each of a handful of phases makes a few per second, a loop syncing every step hundreds to
  // thousands: 14 syncs in a 240 ms program is 58/s and normal, 10,000 in 1 s is not.
  double sync_min_rate_per_s = 100;
  // Waits that are each short still cost the drained queue: after each one returns the GPU idles
  // until the host launches again. Frequent syncs (calls and rate as above) are reported when the
  // GPU idle they cause, in the waits and from each return to the next GPU operation, is at least
  // this share of the thread's active time, whatever the waiting share.
  double sync_min_caused_idle_share = 0.10;
  // D2H copies this small or smaller that the host waits for are "read-backs" (`.item()`).
  double readback_max_bytes = 1024;

  // ---- copies.* ---------------------------------------------------------------------------------
  // Copies are "serialized with compute" when H2D+D2H take at least this share of the active span
  // and less than `copy_overlap_min_share` of their time runs while a kernel runs.
  double copy_min_share = 0.05;
  double copy_overlap_min_share = 0.2;
  // Async copies from/to pageable memory are reported from this many on.
  double pageable_async_min_count = 1;
  // Synchronous H2D copies this small or smaller are spared, like nsys does: the driver stages
  // them and returns before the transfer, so the host hardly waits.
  double sync_copy_spare_h2d_bytes = 65536;
  // Synchronous copies/memsets are reported from this many on.
  double sync_copy_min_count = 1;
  double sync_memset_min_count = 1;

  // ---- streams.* --------------------------------------------------------------------------------
  // Streams with fewer operations than this are not judged for overlap.
  double stream_min_ops = 10;
  // Two streams whose work interleaves in time (active spans overlapping at least this share of
  // the shorter one) yet overlap less than `stream_max_overlap_share` of the smaller busy time
  // are serialized.
  double stream_interleave_min_share = 0.5;
  double stream_max_overlap_share = 0.01;
  // Event waits are reported when the GPU time they cost (idle during the stalls, plus overlap
  // lost: the GPU running one operation while the waiter stalled, up to the time the released
  // operation then ran alone) is at least this share of the active span. Raw stall time is not
  // the measure: a consumer waiting for its producer while the GPU is busy is healthy pipelining.
  double event_wait_min_share = 0.02;

  // ---- hot.kernels ------------------------------------------------------------------------------
  // How many kernels the hot list names.
  double hot_kernels_top = 5;
  // The hot list is reported when its first kernel holds at least this share of kernel time.
  double hot_kernel_min_share = 0.2;

  // ---- kernel.internals (percent of peak, as ncu reports them) ----------------------------------
  // SM throughput at or above this is compute-bound: the busiest SM pipe runs near its peak.
  double kernel_compute_bound_pct = 60;
  // DRAM or L2 throughput at or above this is memory-bound. gpu__compute_memory_throughput is not
  // used for it: it is the maximum over L1, L2 and DRAM, and a GEMM reading from L1 shows ~95%
  // there while its DRAM traffic is ~20% of peak.
  double kernel_memory_bound_pct = 60;
  // Below this on both sides (SM, and every memory unit measured) the kernel is latency-bound: far
  // from both roofs, waiting rather than working. Between this and the bound thresholds it is mixed.
  double kernel_latency_bound_pct = 40;
  // Achieved occupancy (share of the SM's warp slots) below this is low: under ~5 warps per
  // scheduler of a 64-warp SM, a scheduler often has no eligible warp while the rest wait. Low
  // occupancy is only reported as a problem when neither roof is reached.
  double kernel_low_occupancy_pct = 30;
  // Achieved occupancy below this, in a kernel that reaches no roof (latency-bound or mixed) and whose
  // top stall is a latency stall (long or short scoreboard) while the launch configuration caps
  // occupancy, is the likely cause: too few warps to hide the latency the warps wait on. Half an
  // SM's warp slots and less is where ncu's occupancy rules start estimating gains on Hopper.
  double kernel_latency_hiding_occupancy_pct = 60;

  // ---- GPU counters (sampled over time) ----------------------------------------------------------
  // The window is split into this many equal intervals to set the timeline's kernel busy time
  // beside the sampled counters: 10 shows a change of phase (warm-up, steady state, tail) and fits a
  // terminal; the time-weighted averages inside an interval smooth away sampling noise.
  double gpu_counter_intervals = 10;
  // An interval where the timeline's kernel busy % and the sampled SM active % differ by at least
  // this many points is flagged. PM samples start and stop at their own period, not at kernel edges,
  // so a few points apart is sampling; 25 is a different picture (few SMs busy, or work the trace
  // did not record).
  double counter_disagree_points = 25;

  // ---- gpu.throttle -----------------------------------------------------------------------------
  // A device is reported when power or thermal slowdown (NVML clocks-event reasons) covered at
  // least this share of its kernel busy time. Below 5%, even a 30% clock drop moves the run's kernel
  // time by under 1.5%, less than run-to-run noise (`cuscope diff` calls 2% no clear change), and a
  // single NVML reading (every 10-100 ms) covering a short burst would raise it.
  double throttle_min_kernel_share = 0.05;

  // ---- comm.exposed (one trace) and ranks.* (a set of rank traces) --------------------------------
  // Communication (NCCL kernels) with no compute kernel beside it on its device adds its whole time
  // to the step: reported when at least this share of the device's counted active span is such
  // exposed communication. 5%: as the severity's warning share, what a tuning step can win.
  double comm_exposed_min_share = 0.05;
  // A rank is the straggler of a collective when it arrives (its kernel starts) last by more than
  // this, and of the run when it is so for at least `straggler_min_share` of the collectives
  // matched across ranks. 50 us: below it, launch jitter (a kernel start varies by tens of
  // microseconds between ranks with identical work).
  double straggler_min_skew_us = 50;
  double straggler_min_share = 0.5;
  // A step whose slowest rank takes this much longer than the median rank is imbalanced (10%: the
  // step time NCCL's synchronizing collectives make every rank wait for).
  double step_imbalance_min_share = 0.10;

  // ---- requests.queued, requests.slow (request scopes) ---------------------------------------
  // A route is judged once it has this many requests (fewer: no percentile means anything).
  double request_min_count = 10;
  // requests.queued: a route's requests spend at least this share of their span waiting on the GPU
  // between their first launch and their first kernel (behind other work), and the median request
  // at least `request_queue_min_us` (a launch alone takes a few microseconds).
  double request_queue_min_share = 0.2;
  double request_queue_min_us = 200;
  // requests.slow: the route's p99 request takes at least this many times the median one, and at
  // least `request_slow_min_excess_ms` more.
  double request_slow_ratio = 2;
  double request_slow_min_excess_ms = 1;
};

struct ThresholdInfo {
  std::string_view name;
  double Thresholds::*field;
  std::string_view description;
};

const std::vector<ThresholdInfo>& ThresholdTable();

// Applies one `name=value` override. Unknown names and values that are not numbers fail.
absl::Status ApplyThresholdOverride(std::string_view assignment, Thresholds* thresholds);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_THRESHOLDS_H_
