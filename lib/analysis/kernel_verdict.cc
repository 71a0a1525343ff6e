#include "lib/analysis/kernel_verdict.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/stall_reasons.h"
#include "lib/core/metric_sets.h"

namespace cuscope::analysis::kernel_verdict {
namespace {

namespace metric = core::metric;

constexpr absl::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr absl::string_view kStallSuffix = "_per_issue_active.ratio";

std::string Pct(double pct) { return absl::StrFormat("%.1f%%", pct); }

const v1::Device* FindDevice(const core::Trace& trace, uint32_t device) {
  for (const v1::Device& d : trace.header.devices()) {
    if (d.id() == device) return &d;
  }
  return nullptr;
}

// ---- Reading the averaged values ----------------------------------------------------------------

std::optional<double> Value(const KernelVerdict& v, std::string_view name) {
  const MetricValue* m = v.metric(name);
  if (m == nullptr) return std::nullopt;
  return m->value;
}

void ReadRoofline(KernelVerdict& v, const v1::Device* device) {
  RooflinePoint& r = v.roofline;
  auto flops = [&](std::string_view fma, std::string_view add, std::string_view mul, bool& any) {
    // A fused multiply-add is two operations.
    const std::optional<double> f = Value(v, fma), a = Value(v, add), m = Value(v, mul);
    any = any || f || a || m;
    return 2 * f.value_or(0) + a.value_or(0) + m.value_or(0);
  };
  bool any = false;
  r.fp32_flop = flops(metric::kFfma, metric::kFadd, metric::kFmul, any);
  r.fp64_flop = flops(metric::kDfma, metric::kDadd, metric::kDmul, any);
  r.fp16_flop = flops(metric::kHfma, metric::kHadd, metric::kHmul, any);
  // Tensor cores by input type, with each type's dense peak relative to FP16's (GH100: TF32 half,
  // FP8 twice; the trace header holds the FP16 tensor peak).
  struct TensorType {
    std::string_view metric, precision;
    double peak_vs_fp16;
  };
  static constexpr TensorType kTensorTypes[] = {{metric::kTensorFp16, "tensor FP16", 1.0},
                                                {metric::kTensorBf16, "tensor BF16", 1.0},
                                                {metric::kTensorTf32, "tensor TF32", 0.5},
                                                {metric::kTensorFp8, "tensor FP8", 2.0}};
  const TensorType* top_tensor = nullptr;
  double top_tensor_flop = 0;
  for (const TensorType& t : kTensorTypes) {
    const std::optional<double> ops = Value(v, t.metric);
    if (!ops) continue;
    r.tensor_counted = true;
    any = true;
    r.tensor_flop += *ops;
    if (*ops > top_tensor_flop) {
      top_tensor_flop = *ops;
      top_tensor = &t;
    }
  }
  r.tensor_pipe_pct = Value(v, metric::kTensorPipePct);
  r.dram_bytes = Value(v, metric::kDramBytes);
  r.present = any;
  if (!any) return;
  const double total = r.fp32_flop + r.fp64_flop + r.fp16_flop + r.tensor_flop;
  double peak = 0;
  if (top_tensor != nullptr && r.tensor_flop > std::max({r.fp32_flop, r.fp64_flop, r.fp16_flop})) {
    r.precision = std::string(top_tensor->precision);
    peak = device ? device->peak_fp16_tensor_flops() * top_tensor->peak_vs_fp16 : 0;
  } else if (r.fp64_flop > r.fp32_flop && r.fp64_flop >= r.fp16_flop) {
    r.precision = "FP64";
    peak = device ? device->peak_fp64_flops() : 0;
  } else if (r.fp16_flop > r.fp32_flop) {
    r.precision = "FP16";
    peak = device ? device->peak_fp16_flops() : 0;
  } else {
    r.precision = "FP32";
    peak = device ? device->peak_fp32_flops() : 0;
  }
  if (v.duration_ns && *v.duration_ns > 0) r.flop_per_second = total / (*v.duration_ns * 1e-9);
  if (r.dram_bytes && *r.dram_bytes > 0) r.intensity = total / *r.dram_bytes;
  const double peak_dram = device ? static_cast<double>(device->peak_dram_bytes_per_second()) : 0;
  if (peak > 0 && peak_dram > 0) r.ridge = peak / peak_dram;
  if (peak > 0 && r.flop_per_second > 0) {
    r.peak_flops_pct = 100.0 * r.flop_per_second / peak;
    // The roof at this intensity: the memory slope below the ridge, the flat compute roof above.
    double roof = peak;
    if (r.intensity && peak_dram > 0) roof = std::min(peak, *r.intensity * peak_dram);
    if (roof > 0) r.roof_pct = 100.0 * r.flop_per_second / roof;
  }
}

void ReadStalls(KernelVerdict& v) {
  double sum = 0;
  for (const MetricValue& m : v.metrics) {
    const absl::string_view name = m.name;
    if (!absl::StartsWith(name, kStallPrefix) || !absl::EndsWith(name, kStallSuffix)) continue;
    if (name.size() <= kStallPrefix.size() + kStallSuffix.size()) continue;
    const absl::string_view reason =
        name.substr(kStallPrefix.size(), name.size() - kStallPrefix.size() - kStallSuffix.size());
    v.stalls.push_back(StallShare{std::string(reason), std::max(0.0, m.value), 0});
    sum += std::max(0.0, m.value);
  }
  if (v.stalls.empty()) return;
  // The reasons add up to about the warp cycles per issued instruction; without that metric their
  // sum stands in for it.
  const std::optional<double> per_issue = Value(v, metric::kWarpCyclesPerIssue);
  const double total = per_issue && *per_issue > 0 ? *per_issue : sum;
  for (StallShare& s : v.stalls) s.share = total > 0 ? s.cycles / total : 0;
  std::stable_sort(v.stalls.begin(), v.stalls.end(),
                   [](const StallShare& a, const StallShare& b) { return a.cycles > b.cycles; });
  for (size_t i = 0; i < v.stalls.size(); ++i) {
    if (v.stalls[i].cycles > 0 && DescribeStall(v.stalls[i].reason).actionable) {
      v.top_stall = i;
      break;
    }
  }
}

// ---- The verdict ----------------------------------------------------------------------------------

void DecideBottleneck(KernelVerdict& v, const Thresholds& t) {
  const double compute_min = t.kernel_compute_bound_pct;
  const double memory_min = t.kernel_memory_bound_pct;
  const double latency_max = t.kernel_latency_bound_pct;
  // The memory roofs that count: DRAM and L2.
  std::optional<double> roof;
  std::string roof_name;
  if (v.dram_pct) {
    roof = *v.dram_pct;
    roof_name = v.dram_derived ? "DRAM (from dram__bytes / duration)" : "DRAM";
  }
  if (v.l2_pct && (!roof || *v.l2_pct > *roof)) {
    roof = *v.l2_pct;
    roof_name = "L2";
  }
  // The compute side: SM throughput, or lacking it the FP rate against its peak (roofline set).
  std::optional<double> compute = v.sm_pct;
  std::string compute_name = "SM throughput";
  if (!compute && v.roofline.peak_flops_pct) {
    compute = v.roofline.peak_flops_pct;
    compute_name = absl::StrCat(v.roofline.precision, " FLOP rate");
  }
  const bool compute_high = compute && *compute >= compute_min;
  const bool memory_high = roof && *roof >= memory_min;
  // The memory units broken down, for the reasons.
  auto breakdown = [&v] {
    std::vector<std::string> parts;
    if (v.dram_pct) parts.push_back(absl::StrCat("DRAM ", Pct(*v.dram_pct)));
    if (v.l2_pct) parts.push_back(absl::StrCat("L2 ", Pct(*v.l2_pct)));
    if (v.l1_pct) parts.push_back(absl::StrCat("L1 ", Pct(*v.l1_pct)));
    return absl::StrJoin(parts, ", ");
  };
  // L1/shared memory is the busy unit when its throughput, or gpu__compute_memory_throughput (the
  // maximum over L1, L2 and DRAM), is high while DRAM and L2 are measured and are not.
  const double l1_side = std::max(v.memory_pct.value_or(0), v.l1_pct.value_or(0));
  const bool l1_busy = roof && !memory_high && l1_side >= memory_min;
  v.l1_limited = l1_busy;

  if (compute_high && memory_high) {
    bool memory_wins = *roof > *compute;
    std::string how = "the higher of the two";
    if (v.roofline.intensity && v.roofline.ridge) {
      memory_wins = v.roofline.below_ridge();
      how = absl::StrFormat("arithmetic intensity %.3g FLOP/B is %s the ridge point %.3g FLOP/B",
                            *v.roofline.intensity, memory_wins ? "below" : "above", *v.roofline.ridge);
    }
    v.bottleneck = memory_wins ? Bottleneck::kMemory : Bottleneck::kCompute;
    v.reason = absl::StrCat("both roofs are near: ", compute_name, " ", Pct(*compute), " and ", roof_name, " ",
                            Pct(*roof), " (thresholds ", Pct(compute_min), " / ", Pct(memory_min), "); ", how,
                            " makes it ", std::string(BottleneckName(v.bottleneck)));
    return;
  }
  if (compute_high) {
    v.bottleneck = Bottleneck::kCompute;
    v.reason = absl::StrCat(compute_name, " ", Pct(*compute), " of peak (>= ", Pct(compute_min), ")");
    if (l1_busy) {
      absl::StrAppend(&v.reason, "; memory throughput ", Pct(l1_side), " is L1/shared-memory traffic (",
                      breakdown(), "), not DRAM: not memory-bound");
    } else if (!roof && v.memory_pct && *v.memory_pct >= memory_min) {
      absl::StrAppend(&v.reason, "; memory throughput ", Pct(*v.memory_pct),
                      " (the maximum over L1, L2 and DRAM; no DRAM/L2 breakdown collected)");
    } else if (roof) {
      absl::StrAppend(&v.reason, "; ", breakdown());
    }
    return;
  }
  if (memory_high) {
    v.bottleneck = Bottleneck::kMemory;
    v.reason = absl::StrCat(roof_name, " throughput ", Pct(*roof), " of peak (>= ", Pct(memory_min), ")");
    if (compute) absl::StrAppend(&v.reason, "; ", compute_name, " ", Pct(*compute));
    return;
  }

  // Neither roof reached: far from both, or in between.
  if (!v.sm_pct) {
    v.bottleneck = Bottleneck::kUndetermined;
    v.reason = "SM throughput was not collected (sol set): cannot tell compute-, memory- or latency-bound apart";
    if (compute) {
      absl::StrAppend(&v.reason, " (", compute_name, " ", Pct(*compute), " alone does not say the SM is idle)");
    }
    return;
  }
  if (!roof && !v.memory_pct && !v.l1_pct) {
    v.bottleneck = Bottleneck::kUndetermined;
    v.reason = absl::StrCat("SM throughput ", Pct(*v.sm_pct),
                            ", but no memory throughput was collected (sol set): cannot tell memory-bound from "
                            "latency-bound");
    return;
  }
  if (!roof && l1_side >= memory_min) {
    v.bottleneck = Bottleneck::kUndetermined;
    v.reason = absl::StrCat(v.memory_pct && *v.memory_pct >= memory_min ? "memory throughput " : "L1 throughput ",
                            Pct(l1_side),
                            " is high, but without the DRAM and L2 breakdown (sol set) DRAM-bound cannot be told "
                            "from L1 traffic");
    return;
  }
  const double busiest_memory = std::max({roof.value_or(0), v.memory_pct.value_or(0), v.l1_pct.value_or(0)});
  if (*v.sm_pct < latency_max && busiest_memory < latency_max) {
    v.bottleneck = Bottleneck::kLatency;
    v.reason = absl::StrCat("far from both roofs: SM throughput ", Pct(*v.sm_pct), " and memory ",
                            Pct(busiest_memory), " (busiest unit) are both below ", Pct(latency_max));
    return;
  }
  v.bottleneck = Bottleneck::kMixed;
  if (l1_busy) {
    v.reason = absl::StrCat("L1/shared-memory throughput ", Pct(l1_side), " is the busiest unit while ", breakdown(),
                            ": the L1/shared-memory path limits it, not DRAM; SM throughput ", Pct(*v.sm_pct));
  } else {
    v.reason = absl::StrCat("no roof reached, but not far from one either: SM throughput ", Pct(*v.sm_pct),
                            ", busiest memory unit ", Pct(busiest_memory), " (latency-bound below ", Pct(latency_max),
                            " on both)");
  }
}

std::string RegisterAdvice(const KernelVerdict& v, const v1::Device& device) {
  const Occupancy& o = *v.theoretical;
  std::string out = absl::StrCat(v.launch.registers_per_thread, " registers per thread allow ", o.blocks_per_sm,
                                 " blocks (", o.active_warps_per_sm, " warps) per SM");
  // The most registers per thread that would fit one more block, tried in the allocation's steps
  // of 8 from below the launch's count. Starting at most at the hardware's 255 keeps the search
  // to 31 tries whatever a damaged record says (the trace's field holds 65,535).
  const uint32_t from = std::min<uint32_t>(v.launch.registers_per_thread, 256);
  for (uint32_t regs = from > 0 ? (from - 1) / 8 * 8 : 0; regs >= 8; regs -= 8) {
    LaunchConfig fewer = v.launch;
    fewer.registers_per_thread = regs;
    auto more = TheoreticalOccupancy(fewer, device);
    if (more.ok() && more->active_warps_per_sm > o.active_warps_per_sm) {
      absl::StrAppend(&out, "; at ", regs, " or fewer, ", more->blocks_per_sm, " blocks (",
                      Pct(more->occupancy_pct), ") would fit: cap them with __launch_bounds__ or -maxrregcount, "
                      "or keep fewer values live");
      return out;
    }
  }
  return out;
}

std::string LimiterAdvice(const KernelVerdict& v, const v1::Device* device) {
  const Occupancy& o = *v.theoretical;
  switch (o.limiter) {
    case OccupancyLimiter::kRegisters:
      return device ? RegisterAdvice(v, *device) : "use fewer registers per thread";
    case OccupancyLimiter::kSharedMemory:
      return absl::StrCat(o.shared_memory_per_block, " B of shared memory per block (with the system's reservation) "
                          "allow ", o.blocks_per_sm, " blocks per SM: use smaller tiles or fewer pipeline stages");
    case OccupancyLimiter::kWarps:
      return absl::StrCat("blocks of ", o.warps_per_block, " warps fit ", o.blocks_per_sm, " times into ",
                          o.max_warps_per_sm, " warp slots: pick a block size whose warp count divides ",
                          o.max_warps_per_sm);
    case OccupancyLimiter::kBlocks: {
      const uint32_t needed = o.blocks_by_block_limit > 0 ? o.max_warps_per_sm / o.blocks_by_block_limit : 0;
      return absl::StrCat("blocks of ", o.warps_per_block, " warps hit the limit of ", o.blocks_by_block_limit,
                          " resident blocks per SM: use blocks of at least ", needed, " warps (", needed * 32,
                          " threads)");
    }
    case OccupancyLimiter::kNone: break;
  }
  return "";
}

void DecideOccupancy(KernelVerdict& v, const Thresholds& t, const v1::Device* device) {
  std::optional<double> occupancy = v.achieved_occupancy_pct;
  std::string what = "achieved occupancy";
  if (!occupancy && v.theoretical) {
    occupancy = v.theoretical->occupancy_pct;
    what = "theoretical occupancy (achieved not collected)";
  }
  std::string theoretical_text;
  if (v.theoretical) {
    theoretical_text = absl::StrCat("theoretical ", Pct(v.theoretical->occupancy_pct), ", ",
                                    v.theoretical->limiter == OccupancyLimiter::kNone
                                        ? std::string("no limiter")
                                        : absl::StrCat("limited by ", LimiterNames(*v.theoretical)));
  }
  if (!occupancy) {
    v.occupancy = OccupancyVerdict::kUnknown;
    v.occupancy_note =
        absl::StrCat("occupancy unknown: the occupancy set was not collected and the theoretical one is unknown (",
                     v.theoretical_error, ")");
    return;
  }
  const std::string head = absl::StrCat(what, " ", Pct(*occupancy),
                                        theoretical_text.empty() ? "" : absl::StrCat(" (", theoretical_text, ")"));
  if (*occupancy >= t.kernel_low_occupancy_pct) {
    // Not low by itself; but short of both roofs, with the warps waiting on memory latency and the
    // launch configuration holding occupancy down, more warps are what would hide that latency.
    const bool no_roof = v.bottleneck == Bottleneck::kLatency || v.bottleneck == Bottleneck::kMixed;
    const bool latency_stall =
        v.top_stall && (v.stalls[*v.top_stall].reason == "long_scoreboard" ||
                        v.stalls[*v.top_stall].reason == "short_scoreboard");
    const bool capped = v.theoretical && v.theoretical->limiter != OccupancyLimiter::kNone &&
                        v.theoretical->occupancy_pct < 100;
    if (no_roof && latency_stall && capped && *occupancy < t.kernel_latency_hiding_occupancy_pct) {
      const StallShare& stall = v.stalls[*v.top_stall];
      v.occupancy = OccupancyVerdict::kProblem;
      v.occupancy_note = absl::StrCat(
          head, ": too few warps to hide latency: no roof is reached and the top stall is ", stall.reason, " (",
          FormatPercent(stall.share), " of the stall cycles), while the launch configuration caps occupancy at ",
          Pct(v.theoretical->occupancy_pct), ", limited by ", LimiterNames(*v.theoretical), ": ",
          LimiterAdvice(v, device),
          absl::StrFormat("; estimated gain up to %.0f%% of the kernel's time (the warp slots the limit leaves "
                          "empty, as ncu estimates it: an upper bound)",
                          100 - v.theoretical->occupancy_pct));
      return;
    }
    v.occupancy = OccupancyVerdict::kFine;
    v.occupancy_note = absl::StrCat(head, ": not low");
    return;
  }
  switch (v.bottleneck) {
    case Bottleneck::kCompute:
    case Bottleneck::kMemory:
      v.occupancy = OccupancyVerdict::kLowButFine;
      v.occupancy_note = absl::StrCat(head, ": low, but the kernel reaches the ",
                                      v.bottleneck == Bottleneck::kCompute ? "compute" : "memory",
                                      " roof with these warps; more would not help: leave it");
      return;
    case Bottleneck::kUndetermined:
      v.occupancy = OccupancyVerdict::kUnknown;
      v.occupancy_note = absl::StrCat(head, ": low; whether it matters depends on throughput, which was not "
                                            "collected (sol set)");
      return;
    case Bottleneck::kLatency:
    case Bottleneck::kMixed: break;
  }
  v.occupancy = OccupancyVerdict::kProblem;
  v.occupancy_note = absl::StrCat(head, ": low, and neither roof is reached: too few warps to hide latency");
  if (!v.theoretical) {
    absl::StrAppend(&v.occupancy_note, "; the launch configuration's limiter is unknown (", v.theoretical_error, ")");
  } else if (v.theoretical->occupancy_pct < t.kernel_low_occupancy_pct &&
             v.theoretical->limiter != OccupancyLimiter::kNone) {
    absl::StrAppend(&v.occupancy_note, "; the launch configuration caps it, limited by ",
                    LimiterNames(*v.theoretical), ": ", LimiterAdvice(v, device));
  } else {
    absl::StrAppend(&v.occupancy_note, "; the launch allows ", Pct(v.theoretical->occupancy_pct),
                    ", so the gap is at run time: too few blocks to fill the SMs");
    if (v.waves) absl::StrAppend(&v.occupancy_note, absl::StrFormat(" (%.2f waves)", *v.waves));
    absl::StrAppend(&v.occupancy_note, ", or blocks of uneven length leaving SMs idle at the tail");
  }
}

void DescribeStalls(KernelVerdict& v) {
  if (v.stalls.empty()) return;
  const std::optional<double> per_issue = Value(v, metric::kWarpCyclesPerIssue);
  if (!v.top_stall) {
    v.stall_note = "no stall reason stands out: warps mostly issue or wait only to be selected";
    return;
  }
  const StallShare& s = v.stalls[*v.top_stall];
  const StallReasonInfo& info = DescribeStall(s.reason);
  v.stall_note = absl::StrCat("top stall ", s.reason, ": ", FormatPercent(s.share), " of ",
                              per_issue ? absl::StrFormat("the %.1f cycles between a warp's instructions", *per_issue)
                                        : std::string("the stall cycles"),
                              ", ", std::string(info.meaning));
}

void DescribeRoofline(KernelVerdict& v) {
  const RooflinePoint& r = v.roofline;
  if (!r.present) return;
  std::vector<std::string> parts;
  if (r.flop_per_second > 0) parts.push_back(absl::StrCat(FormatSi(r.flop_per_second, "FLOP/s"), " ", r.precision));
  if (r.peak_flops_pct) parts.push_back(absl::StrCat(Pct(*r.peak_flops_pct), " of the ", r.precision, " peak"));
  if (r.intensity) parts.push_back(absl::StrFormat("arithmetic intensity %.3g FLOP/B", *r.intensity));
  if (r.ridge) parts.push_back(absl::StrFormat("ridge point %.3g FLOP/B", *r.ridge));
  if (r.intensity && r.ridge) {
    parts.push_back(r.below_ridge() ? "below the ridge: under the memory roof"
                                    : "above the ridge: under the compute roof");
  }
  if (r.roof_pct) parts.push_back(absl::StrCat(Pct(*r.roof_pct), " of the roof at this intensity"));
  if (r.tensor_pipe_pct) {
    parts.push_back(absl::StrCat("tensor pipe ", Pct(*r.tensor_pipe_pct), " active",
                                 *r.tensor_pipe_pct > 1 && !r.tensor_counted ? " (tensor-core math is not in the FLOP count)"
                                                                             : ""));
  }
  v.roofline_note = absl::StrJoin(parts, ", ");
}

void Recommend(KernelVerdict& v, const std::vector<std::string>& missing_sets) {
  std::string& out = v.recommendation;
  switch (v.bottleneck) {
    case Bottleneck::kCompute:
      out = "Compute-bound: do less math or faster math: tensor cores for matrix math (TF32, BF16, FP16, FP8), "
            "lower precision, fused multiply-add, and no redundant work (recomputed values, math that a table or "
            "algebra removes).";
      break;
    case Bottleneck::kMemory:
      out = "Memory-bound: move fewer bytes: fuse with the kernels before and after so intermediates stay on chip, "
            "store narrower types (BF16, FP16, INT8), tile for reuse in shared memory and L2, and load each value "
            "once.";
      if (v.roofline.intensity && v.roofline.ridge) {
        absl::StrAppend(&out, absl::StrFormat(" Arithmetic intensity %.3g FLOP/B against a ridge point of %.3g "
                                              "FLOP/B: ",
                                              *v.roofline.intensity, *v.roofline.ridge),
                        v.roofline.below_ridge() ? "more reuse per byte is what lifts it."
                                                 : "the FLOPs allow more, so the bytes moved are not all needed "
                                                   "ones (cache misses, poor coalescing).");
      }
      break;
    case Bottleneck::kLatency:
      out = "Latency-bound: far from both roofs, the warps mostly wait.";
      break;
    case Bottleneck::kMixed:
      out = "Neither roof is reached and neither is far.";
      if (v.l1_limited) {
        absl::StrAppend(&out, " L1/shared memory is the busiest unit: remove shared-memory bank conflicts and "
                              "uncoalesced or repeated accesses, and keep reused data in registers.");
      }
      break;
    case Bottleneck::kUndetermined:
      out = absl::StrCat("No verdict: collect ",
                         missing_sets.empty() ? std::string("the sol set") : absl::StrJoin(missing_sets, ", "),
                         " for this kernel (cuscope profile --metrics LIST, or CUSCOPE_METRICS=LIST).");
      break;
  }
  if (v.occupancy == OccupancyVerdict::kProblem) absl::StrAppend(&out, " Occupancy: ", v.occupancy_note, ".");
  if (v.top_stall && v.bottleneck != Bottleneck::kUndetermined) {
    const StallShare& s = v.stalls[*v.top_stall];
    absl::StrAppend(&out, " Top stall ", s.reason, " (", FormatPercent(s.share),
                    "): ", std::string(DescribeStall(s.reason).advice), ".");
  }
  if ((v.bottleneck == Bottleneck::kLatency || v.bottleneck == Bottleneck::kMixed) && v.waves && *v.waves < 1) {
    absl::StrAppend(&out, absl::StrFormat(" The grid fills %.0f%% of one wave of the GPU: give it more blocks "
                                          "(finer split of the work, batching, or a persistent-thread layout).",
                                          100.0 * *v.waves));
  }
}

// Records what could not be decided; returns the metric sets missing for this kernel.
// The metrics the header says were asked for, looked up once per kernel group: a list walked per
// group would cost groups x header entries, both as large as a damaged file makes them.

std::vector<std::string> ListUndecided(KernelVerdict& v, const RequestedMetrics& requested_metrics) {
  // The header lists the metrics the user asked for: a set asked for but absent from the rows was
  // not produced (the chip lacks the counters, or the collector could not schedule them). Each set
  // is recognized by a metric no other set has.
  auto requested = [&requested_metrics](std::string_view key_metric) {
    return requested_metrics.contains(std::string(key_metric));
  };
  struct Check {
    const char* set;
    std::string_view key_metric;
    bool missing;
    const char* consequence;
  };
  const Check checks[] = {
      {"sol", metric::kSmThroughputPct, !v.sm_pct && !v.memory_pct && !v.dram_pct && !v.l2_pct,
       "SM and memory throughput unknown"},
      {"occupancy", metric::kAchievedOccupancyPct, !v.achieved_occupancy_pct, "achieved occupancy unknown"},
      {"stalls", metric::kWarpCyclesPerIssue, v.stalls.empty(), "no stall breakdown"},
      {"roofline", metric::kFfma, !v.roofline.present, "no FLOP counts or arithmetic intensity"},
  };
  std::vector<std::string> missing;
  for (const Check& c : checks) {
    if (!c.missing) continue;
    missing.emplace_back(c.set);
    v.undecided.push_back(absl::StrCat(c.set, " set not collected",
                                       requested(c.key_metric) ? " (it was requested: the device or driver produced no "
                                                          "values for this kernel)"
                                                        : "",
                                       ": ", c.consequence));
  }
  if (!v.theoretical) v.undecided.push_back(absl::StrCat("theoretical occupancy unknown: ", v.theoretical_error));
  if (v.roofline.present && !v.roofline.ridge) {
    v.undecided.push_back("no ridge point: the trace header lacks the device's peak FLOP/s or DRAM bandwidth");
  }
  return missing;
}

}  // namespace

void Judge(KernelVerdict& v, const core::Trace& trace, const RequestedMetrics& requested, const Thresholds& t) {
  const v1::Device* device = FindDevice(trace, v.device);
  v.duration_ns = Value(v, metric::kDuration);
  v.sm_pct = Value(v, metric::kSmThroughputPct);
  v.memory_pct = Value(v, metric::kMemoryThroughputPct);
  v.dram_pct = Value(v, metric::kDramThroughputPct);
  v.l2_pct = Value(v, metric::kL2ThroughputPct);
  v.l1_pct = Value(v, metric::kL1ThroughputPct);
  v.achieved_occupancy_pct = Value(v, metric::kAchievedOccupancyPct);
  ReadRoofline(v, device);
  if (!v.dram_pct && v.roofline.dram_bytes && v.duration_ns && *v.duration_ns > 0 && device &&
      device->peak_dram_bytes_per_second() > 0) {
    v.dram_pct = 100.0 * *v.roofline.dram_bytes / (*v.duration_ns * 1e-9) /
                 static_cast<double>(device->peak_dram_bytes_per_second());
    v.dram_derived = true;
  }
  if (!v.launch_known) {
    v.theoretical_error =
        v.shape_known ? "no kernel record of this name, grid and block in the trace gives its registers and shared "
                        "memory"
                      : "the profiled launch's kernel record (launch configuration) is not in the trace";
  } else if (device == nullptr) {
    v.theoretical_error = absl::StrCat("device ", v.device, " is not in the trace header");
  } else {
    auto occupancy = TheoreticalOccupancy(v.launch, *device);
    if (occupancy.ok()) {
      v.theoretical = *occupancy;
      const double resident = static_cast<double>(device->sm_count()) * occupancy->blocks_per_sm;
      const double blocks = static_cast<double>(v.grid[0]) * v.grid[1] * v.grid[2];
      if (resident > 0 && blocks > 0) v.waves = blocks / resident;
    } else {
      v.theoretical_error = std::string(occupancy.status().message());
    }
  }
  ReadStalls(v);
  DecideBottleneck(v, t);
  DecideOccupancy(v, t, device);
  DescribeStalls(v);
  DescribeRoofline(v);
  const std::vector<std::string> missing_sets = ListUndecided(v, requested);
  Recommend(v, missing_sets);
  if (v.bottleneck != Bottleneck::kUndetermined) {
    double nearest = 0;
    for (const auto& x : {v.sm_pct, v.memory_pct, v.dram_pct, v.l2_pct, v.l1_pct, v.roofline.roof_pct}) {
      if (x) nearest = std::max(nearest, *x);
    }
    const double headroom = std::clamp(1.0 - nearest / 100.0, 0.0, 1.0);
    v.recoverable_ns = ClampToU64(static_cast<double>(v.gpu_time_ns) * headroom);
  }
}

}  // namespace cuscope::analysis::kernel_verdict
