// kernel.internals: a finding per profiled kernel group from its Range Profiler metrics (the
// verdict itself is lib/analysis/kernel_internals.h). Its severity is the time the kernel could
// save at the roof it is closest to, against its device's active span without metric collection.
#include "absl/strings/str_cat.h"
#include "lib/analysis/kernel_internals.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

Finding KernelVerdictFinding(const KernelVerdict& v, const Thresholds& thresholds) {
  Finding f;
  f.rule_id = "kernel.internals";
  f.recoverable_ns = v.recoverable_ns;
  f.severity = v.bottleneck == Bottleneck::kUndetermined ? Severity::kInfo
                                                          : SeverityFor(v.recoverable_ns, v.device_span_ns, thresholds);
  f.headline = absl::StrCat(v.Label(), ": ", std::string(BottleneckName(v.bottleneck)), ": ", v.reason, " (",
                            v.profiled_launches, v.profiled_launches == 1 ? " launch" : " launches", " profiled, ",
                            FormatPercent(v.kernel_time_share), " of GPU kernel time)");
  f.Add("device", v.device, "id");
  f.Add("profiled_launches", static_cast<double>(v.profiled_launches), "count");
  f.Add("timeline_launches", static_cast<double>(v.timeline_launches), "count");
  f.Add("gpu_time_ns", static_cast<double>(v.gpu_time_ns), "ns");
  f.Add("kernel_time_share", v.kernel_time_share, "ratio");
  if (v.theoretical) {
    const Occupancy& o = *v.theoretical;
    f.Add("theoretical_occupancy_pct", o.occupancy_pct, "%");
    f.Add("theoretical_active_warps_per_sm", o.active_warps_per_sm, "warps");
    auto blocks = [&f](const char* key, uint32_t n) {
      if (n != kNoBlockLimit) f.Add(key, n, "blocks");
    };
    blocks("occupancy_limit_registers", o.blocks_by_registers);
    blocks("occupancy_limit_shared_mem", o.blocks_by_shared_memory);
    blocks("occupancy_limit_warps", o.blocks_by_warps);
    blocks("occupancy_limit_blocks", o.blocks_by_block_limit);
  }
  if (v.waves) f.Add("waves", *v.waves, "waves");
  const RooflinePoint& r = v.roofline;
  if (r.present) {
    f.Add("achieved_flop_per_second", r.flop_per_second, "FLOP/s");
    if (r.intensity) f.Add("arithmetic_intensity", *r.intensity, "FLOP/B");
    if (r.ridge) f.Add("ridge_point", *r.ridge, "FLOP/B");
    if (r.roof_pct) f.Add("roof_pct", *r.roof_pct, "%");
    if (r.peak_flops_pct) f.Add("peak_flops_pct", *r.peak_flops_pct, "%");
  }
  if (v.dram_derived && v.dram_pct) f.Add("dram_pct_derived", *v.dram_pct, "%");
  if (v.top_stall) f.Add(absl::StrCat("top_stall_share_", v.stalls[*v.top_stall].reason), v.stalls[*v.top_stall].share,
                         "ratio");
  for (const MetricValue& m : v.metrics) f.Add(m.name, m.value, m.unit);
  // The launches its time is of: replays that ran while the timeline was off add no time, so no count.
  f.offenders.push_back(Offender{"kernel", v.name, v.timeline_launches + v.replayed_launches_timed, v.gpu_time_ns});
  f.recommendation = v.recommendation;
  // The evidence behind the advice, for a reader of the finding alone.
  if (!v.occupancy_note.empty() && v.occupancy != OccupancyVerdict::kProblem) {
    absl::StrAppend(&f.recommendation, " Occupancy: ", v.occupancy_note, ".");
  }
  if (!v.stall_note.empty()) absl::StrAppend(&f.recommendation, " Stalls: ", v.stall_note, ".");
  if (!v.roofline_note.empty()) absl::StrAppend(&f.recommendation, " Roofline: ", v.roofline_note, ".");
  for (const std::string& u : v.undecided) absl::StrAppend(&f.recommendation, " Not decided: ", u, ".");
  return f;
}

}  // namespace

std::vector<Finding> KernelInternalsRule(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  for (const KernelVerdict& v : JudgeKernels(timeline, thresholds)) {
    findings.push_back(KernelVerdictFinding(v, thresholds));
  }
  return findings;
}

}  // namespace cuscope::analysis
