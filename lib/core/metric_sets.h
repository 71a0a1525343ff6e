// The named metric sets of kernel-internals collection, shared by the collector (which asks the
// Range Profiler for these metrics) and the analyzer (which reads them back by name).
//
// Metric names are the PerfWorks names ncu uses, so a value can be compared with
// `ncu --metrics NAME` directly. Sets:
//   sol        speed of light: SM and memory throughput as % of peak, with the DRAM / L2 / L1
//              breakdown, duration and clocks
//   occupancy  achieved occupancy (the theoretical one comes from the launch configuration and the
//              device limits in the trace header, not from counters)
//   stalls     warp cycles per issued instruction and the stall reasons that make it up
//   roofline   FLOPs by precision, tensor-pipe activity, DRAM bytes and duration: arithmetic
//              intensity and achieved FLOP/s
// A custom list is any comma-separated metric names; set names and metric names can be mixed.
#ifndef CUSCOPE_LIB_CORE_METRIC_SETS_H_
#define CUSCOPE_LIB_CORE_METRIC_SETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cuscope::core {

// Metric names, for the code that reads them back.
namespace metric {
inline constexpr std::string_view kDuration = "gpu__time_duration.sum";
inline constexpr std::string_view kSmThroughputPct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kMemoryThroughputPct =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kDramThroughputPct = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kL2ThroughputPct = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kL1ThroughputPct = "l1tex__throughput.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kSmFrequency = "sm__cycles_elapsed.avg.per_second";
inline constexpr std::string_view kDramFrequency = "dram__cycles_elapsed.avg.per_second";
inline constexpr std::string_view kElapsedCycles = "gpc__cycles_elapsed.max";
inline constexpr std::string_view kAchievedOccupancyPct = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kAchievedActiveWarps = "sm__warps_active.avg.per_cycle_active";
inline constexpr std::string_view kWarpCyclesPerIssue = "smsp__average_warp_latency_per_inst_issued.ratio";
inline constexpr std::string_view kDramBytes = "dram__bytes.sum";
inline constexpr std::string_view kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr std::string_view kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr std::string_view kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr std::string_view kDadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr std::string_view kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr std::string_view kDfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr std::string_view kHadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr std::string_view kHmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr std::string_view kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr std::string_view kTensorPipePct = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
// Tensor-core math by input type, in operations (an FMA is two; on the H200 a cuBLAS 8192^3 FP16
// GEMM read 1.1167e12 = 2*8192^3 * 1.0156, its 320-row tiles covering 8320 rows). GH100 names.
inline constexpr std::string_view kTensorFp16 = "sm__ops_path_tensor_src_fp16.sum";
inline constexpr std::string_view kTensorBf16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
inline constexpr std::string_view kTensorTf32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum";
inline constexpr std::string_view kTensorFp8 = "sm__ops_path_tensor_src_fp8.sum";

// The stall reasons of the `stalls` set: metric names are
// smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio, the average number of warps
// stalled for that reason per cycle with an issue; their sum is about the warp cycles per issued
// instruction, so each one's share of that is its share of the time between issues.
inline constexpr std::string_view kStallReasons[] = {
    "long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle",   "math_pipe_throttle",
    "wait",            "barrier",          "membar",       "not_selected",  "selected",
    "no_instruction",  "branch_resolving", "dispatch_stall", "drain",       "imc_miss",
    "sleeping",        "tex_throttle",     "misc",         "gmma"};
std::string StallMetric(std::string_view reason);
}  // namespace metric

// The names of the predefined sets, in the order they are documented.
const std::vector<std::string>& MetricSetNames();

// The metric names of one predefined set; empty when `set` is not one.
std::vector<std::string> MetricSet(std::string_view set);

// Expands a comma-separated list of set names and metric names into metric names, without
// duplicates, in first-mention order. Errors name the bad entry: an empty entry, or something that
// is neither a set nor shaped like a metric name (unit__counter[.rollup...]).
absl::StatusOr<std::vector<std::string>> ExpandMetricList(std::string_view list);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_METRIC_SETS_H_
