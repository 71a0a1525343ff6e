// Kernel internals: a verdict per profiled kernel from its Range Profiler metrics (the ncu view),
// following the bottom rows of the symptom table in DESIGN.md.
//
// Kernels are grouped by device, name, grid and block; a group's metric values are the mean over
// its profiled launches (each metric over the launches that have it). Its time is what the
// program spent in it: the launches on the timeline plus, for the replayed launches (whose own
// timing is the profiler's), their measured gpu__time_duration.
//
// The verdict, with T_c, T_m, T_l the kernel_*_pct thresholds:
//   compute-bound  SM throughput >= T_c.
//   memory-bound   DRAM or L2 throughput >= T_m. Never from gpu__compute_memory_throughput alone:
//                  that is the maximum over L1, L2 and DRAM, and a GEMM reading through L1 shows
//                  ~95% there with DRAM at ~20%. DRAM throughput may be derived from the roofline
//                  set (dram__bytes / duration against the header's peak) when the sol set lacks it.
//                  When both roofs are reached, the roofline decides (arithmetic intensity against
//                  the device's ridge point), else the higher of the two.
//   latency-bound  SM throughput and every memory unit measured below T_l: far from both roofs.
//   mixed          anything in between (a unit between T_l and the bound thresholds, or L1 busy
//                  while DRAM and L2 are not).
//   undetermined   the metrics needed were not collected; the verdict says which.
// Occupancy is judged against throughput: low occupancy (below kernel_low_occupancy_pct) is a
// problem only when neither roof is reached, and then the limiter of the launch configuration is
// named; with a roof reached it is fine. The dominant stall is the largest actionable stall reason
// as a share of the warp cycles per issued instruction.
#ifndef CUSCOPE_LIB_ANALYSIS_KERNEL_INTERNALS_H_
#define CUSCOPE_LIB_ANALYSIS_KERNEL_INTERNALS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/analysis/occupancy.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

enum class Bottleneck { kUndetermined = 0, kCompute = 1, kMemory = 2, kLatency = 3, kMixed = 4 };
inline constexpr int kBottleneckCount = 5;
// "undetermined", "compute-bound", "memory-bound", "latency-bound", "mixed".
std::string_view BottleneckName(Bottleneck b);

enum class OccupancyVerdict {
  kUnknown = 0,     // neither achieved nor theoretical occupancy known, or the verdict is undetermined
  kFine = 1,        // not low
  kLowButFine = 2,  // low, but a roof is reached: more warps would not help
  kProblem = 3,     // low and neither roof reached
};
std::string_view OccupancyVerdictName(OccupancyVerdict v);

struct MetricValue {
  std::string name;  // the PerfWorks name
  double value = 0;  // mean over the profiled launches that have it
  std::string unit;  // "%", "ns", "bytes", "Hz", "cycles", "warps", "count", "cycles/inst"
  uint64_t launches = 0;
};

struct StallShare {
  std::string reason;  // "long_scoreboard"
  double cycles = 0;   // warp cycles per issued instruction spent in it
  double share = 0;    // of the warp cycles per issued instruction
};

struct RooflinePoint {
  bool present = false;  // FLOP counts and a duration were collected
  double fp32_flop = 0, fp64_flop = 0, fp16_flop = 0;  // per launch: 2*fma + add + mul
  double tensor_flop = 0;                              // per launch: tensor-core operations, all types
  bool tensor_counted = false;                         // the tensor-core counts were collected
  double flop_per_second = 0;                          // all of them together
  // The one with most FLOPs: "FP32", "FP64", "FP16", or a tensor-core input type ("tensor FP16",
  // "tensor BF16", "tensor TF32", "tensor FP8").
  std::string precision;
  std::optional<double> dram_bytes;
  std::optional<double> intensity;       // FLOP per DRAM byte
  std::optional<double> ridge;           // peak FLOP/s of the precision / peak DRAM B/s
  std::optional<double> roof_pct;        // achieved FLOP/s as % of the roof at this intensity
  std::optional<double> peak_flops_pct;  // achieved FLOP/s as % of the precision's peak
  std::optional<double> tensor_pipe_pct;
  bool below_ridge() const { return intensity && ridge && *intensity < *ridge; }
};

struct KernelVerdict {
  // ---- What was profiled
  std::string name;
  uint32_t device = 0;
  // Grid and block known: from the profiled launch's kernel row, or from its metric row (a launch
  // profiled after the timeline window has no kernel row).
  bool shape_known = false;
  // Registers and shared memory known as well: from the kernel row, or from a timeline kernel of
  // the same name, grid and block.
  bool launch_known = false;
  std::array<int32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  LaunchConfig launch;
  uint64_t profiled_launches = 0;
  uint32_t pass_count = 0;  // the most passes any of its launches needed
  uint64_t timeline_launches = 0;
  uint64_t timeline_time_ns = 0;   // of the launches on the timeline
  uint64_t gpu_time_ns = 0;        // timeline time plus the replayed launches' measured duration
  // The replayed launches whose measured duration gpu_time_ns holds (those that ran while the
  // timeline was recorded): with timeline_launches, the launches gpu_time_ns is the time of.
  uint64_t replayed_launches_timed = 0;
  double kernel_time_share = 0;    // of all kernel time, same accounting
  std::vector<MetricValue> metrics;  // every metric collected, by name

  // ---- Inputs to the verdict (nullopt when not collected)
  std::optional<double> duration_ns, sm_pct, memory_pct, dram_pct, l2_pct, l1_pct, achieved_occupancy_pct;
  bool dram_derived = false;  // dram_pct computed from the roofline set
  bool l1_limited = false;    // L1/shared memory busy while DRAM and L2 are not near their roofs
  std::optional<Occupancy> theoretical;
  std::string theoretical_error;  // why `theoretical` is missing
  std::optional<double> waves;    // grid blocks / (SMs x resident blocks per SM)
  RooflinePoint roofline;
  std::vector<StallShare> stalls;  // largest first
  std::optional<size_t> top_stall;  // index into stalls of the largest actionable one

  // ---- The verdict
  Bottleneck bottleneck = Bottleneck::kUndetermined;
  std::string reason;                  // one sentence with the numbers behind it
  std::vector<std::string> undecided;  // what could not be decided, and why
  OccupancyVerdict occupancy = OccupancyVerdict::kUnknown;
  std::string occupancy_note;
  std::string stall_note;
  std::string roofline_note;
  std::string recommendation;
  // Time the kernel could save if it ran at the roof it is closest to: its time x (1 - the
  // largest throughput % / 100). An upper bound; 0 when undetermined.
  uint64_t recoverable_ns = 0;
  // What the severity is judged against: the device's active span without metric collection.
  uint64_t device_span_ns = 0;

  std::string GridText() const;   // "128 1 1"
  std::string BlockText() const;
  // "gemm [grid 128 1 1, block 256 1 1]"
  std::string Label() const;
  const MetricValue* metric(std::string_view name) const;
};

// The run-level picture: profiled kernels weighted by their time.
struct KernelInternalsSummary {
  uint64_t groups = 0;
  uint64_t profiled_launches = 0;
  uint64_t profiled_time_ns = 0;  // time of the profiled groups
  uint64_t kernel_time_ns = 0;    // time of all kernels, same accounting
  std::array<uint64_t, kBottleneckCount> time_by_bottleneck{};
};

// One verdict per profiled kernel group, most time first. Empty when the trace has no metric rows.
// A metric row joins the group of its launch's kernel row (by correlation id); without one, the
// group of its own name, grid and block (rows from before the launch shape was recorded, with
// zeros there, group by name alone). Replayed launches add their measured duration to the group's
// time only when they ran while the timeline was recorded (Timeline::ReplayCaptured).
std::vector<KernelVerdict> JudgeKernels(const Timeline& timeline, const Thresholds& thresholds);
KernelInternalsSummary SummarizeVerdicts(const std::vector<KernelVerdict>& verdicts, const Timeline& timeline);

// The evidence lines under a verdict in the text report ("why:", "throughput:", "occupancy:",
// "stalls:", "roofline:", "not decided:", "advice:"), each starting with `indent`.
std::string RenderVerdictDetails(const KernelVerdict& v, const std::string& indent);
// Where DRAM or L2 throughput came from a multi-pass replay: the bias measured against ncu, and
// how to collect the closer value. Empty for a one-pass collection or without those values.
std::string ReplayBiasNote(const KernelVerdict& v);

// The unit of a metric by its name: "%", "ns", "bytes", "Hz", "cycles", "warps", "count",
// "cycles/inst", or "" when the name says nothing.
std::string MetricUnit(std::string_view metric_name);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_KERNEL_INTERNALS_H_
