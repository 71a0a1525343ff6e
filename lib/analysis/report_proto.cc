#include "lib/analysis/report_proto.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "lib/core/json.h"
#include "lib/core/proto_json.h"

namespace cuscope::analysis {
namespace {

void SetNumber(const std::string& key, double value, const std::string& unit, v1::Number* out) {
  out->set_key(key);
  out->set_value(value);
  out->set_unit(unit);
}

v1::OccupancyLimiter ToProto(OccupancyLimiter l) {
  switch (l) {
    case OccupancyLimiter::kNone: return v1::OCCUPANCY_LIMITER_NONE;
    case OccupancyLimiter::kRegisters: return v1::OCCUPANCY_LIMITER_REGISTERS;
    case OccupancyLimiter::kSharedMemory: return v1::OCCUPANCY_LIMITER_SHARED_MEMORY;
    case OccupancyLimiter::kWarps: return v1::OCCUPANCY_LIMITER_WARPS;
    case OccupancyLimiter::kBlocks: return v1::OCCUPANCY_LIMITER_BLOCKS;
  }
  return v1::OCCUPANCY_LIMITER_UNKNOWN;
}

v1::KernelVerdict ToProto(const KernelVerdict& v) {
  v1::KernelVerdict p;
  p.set_kernel_name(v.name);
  p.set_device(v.device);
  if (v.shape_known) {
    p.set_grid(v.GridText());
    p.set_block(v.BlockText());
  }
  p.set_profiled_launches(v.profiled_launches);
  p.set_pass_count(v.pass_count);
  p.set_timeline_launches(v.timeline_launches);
  p.set_gpu_time_ns(v.gpu_time_ns);
  p.set_kernel_time_share(v.kernel_time_share);
  // The enums share their numbering.
  p.set_bottleneck(static_cast<v1::Bottleneck>(static_cast<int>(v.bottleneck)));
  p.set_reason(v.reason);
  for (const std::string& u : v.undecided) p.add_undecided(u);
  if (v.sm_pct) p.set_sm_pct(*v.sm_pct);
  if (v.memory_pct) p.set_memory_pct(*v.memory_pct);
  if (v.dram_pct) p.set_dram_pct(*v.dram_pct);
  p.set_dram_derived(v.dram_derived);
  if (v.l2_pct) p.set_l2_pct(*v.l2_pct);
  if (v.l1_pct) p.set_l1_pct(*v.l1_pct);
  if (v.achieved_occupancy_pct) p.set_achieved_occupancy_pct(*v.achieved_occupancy_pct);
  if (v.duration_ns) p.set_duration_ns(*v.duration_ns);
  if (v.theoretical) {
    const Occupancy& o = *v.theoretical;
    v1::TheoreticalOccupancy* t = p.mutable_theoretical_occupancy();
    t->set_warps_per_block(o.warps_per_block);
    t->set_registers_per_warp(o.registers_per_warp);
    t->set_shared_memory_per_block(o.shared_memory_per_block);
    t->set_blocks_by_registers(o.blocks_by_registers);
    t->set_blocks_by_shared_memory(o.blocks_by_shared_memory);
    t->set_blocks_by_warps(o.blocks_by_warps);
    t->set_blocks_by_block_limit(o.blocks_by_block_limit);
    t->set_blocks_per_sm(o.blocks_per_sm);
    t->set_active_warps_per_sm(o.active_warps_per_sm);
    t->set_max_warps_per_sm(o.max_warps_per_sm);
    t->set_occupancy_pct(o.occupancy_pct);
    t->set_limiter(ToProto(o.limiter));
    t->set_cluster_launch(o.cluster_launch);
    t->set_not_launchable(std::string(o.not_launchable));
  }
  p.set_theoretical_occupancy_error(v.theoretical_error);
  if (v.waves) p.set_waves(*v.waves);
  p.set_occupancy(static_cast<v1::OccupancyAssessment>(static_cast<int>(v.occupancy)));
  p.set_occupancy_note(v.occupancy_note);
  for (const StallShare& st : v.stalls) {
    v1::StallReason* ps = p.add_stalls();
    ps->set_reason(st.reason);
    ps->set_cycles_per_instruction(st.cycles);
    ps->set_share(st.share);
  }
  if (v.top_stall) p.set_top_stall(v.stalls[*v.top_stall].reason);
  p.set_stall_note(v.stall_note);
  if (v.roofline.present) {
    const RooflinePoint& r = v.roofline;
    v1::RooflinePoint* pr = p.mutable_roofline();
    pr->set_fp32_flop(r.fp32_flop);
    pr->set_fp64_flop(r.fp64_flop);
    pr->set_fp16_flop(r.fp16_flop);
    pr->set_flop_per_second(r.flop_per_second);
    pr->set_precision(r.precision);
    if (r.dram_bytes) pr->set_dram_bytes(*r.dram_bytes);
    if (r.intensity) pr->set_intensity(*r.intensity);
    if (r.ridge) pr->set_ridge(*r.ridge);
    if (r.roof_pct) pr->set_roof_pct(*r.roof_pct);
    if (r.peak_flops_pct) pr->set_peak_flops_pct(*r.peak_flops_pct);
    if (r.tensor_pipe_pct) pr->set_tensor_pipe_pct(*r.tensor_pipe_pct);
  }
  p.set_roofline_note(v.roofline_note);
  for (const MetricValue& m : v.metrics) SetNumber(m.name, m.value, m.unit, p.add_metrics());
  p.set_recommendation(v.recommendation);
  p.set_recoverable_ns(v.recoverable_ns);
  return p;
}

}  // namespace

v1::Finding ToProto(const Finding& f) {
  v1::Finding pf;
  pf.set_rule_id(f.rule_id);
  pf.set_severity(static_cast<v1::Severity>(static_cast<int>(f.severity)));
  pf.set_headline(f.headline);
  for (const Number& n : f.numbers) SetNumber(n.key, n.value, n.unit, pf.add_numbers());
  for (const Span& sp : f.spans) {
    v1::Span* ps = pf.add_spans();
    ps->set_start_ns(sp.begin);
    ps->set_end_ns(sp.end);
    ps->set_label(sp.label);
  }
  for (const Offender& o : f.offenders) {
    v1::Offender* po = pf.add_offenders();
    po->set_kind(o.kind);
    po->set_name(o.name);
    po->set_count(o.count);
    po->set_time_ns(o.time_ns);
  }
  pf.set_recommendation(f.recommendation);
  pf.set_recoverable_ns(f.recoverable_ns);
  return pf;
}

// Cells as they are (the renderers' formatting is for people), typed by their column.
v1::Table ToProto(const Table& t) {
  v1::Table pt;
  pt.set_name(t.name);
  pt.set_title(t.title);
  for (const Column& c : t.columns) pt.add_columns(c.name);
  for (const auto& row : t.rows) {
    v1::TableRow* pr = pt.add_rows();
    for (size_t c = 0; c < row.size(); ++c) {
      google::protobuf::Value* cell = pr->add_cells();
      const bool numeric = c < t.columns.size() && t.columns[c].type != ColumnType::kText;
      const core::Json number = numeric ? core::JsonNumberFromText(row[c]) : core::Json(row[c]);
      if (number.is_null()) {
        cell->set_null_value(google::protobuf::NULL_VALUE);
      } else if (number.is_number()) {
        cell->set_number_value(number.get<double>());
      } else {
        cell->set_string_value(row[c]);
      }
    }
  }
  return pt;
}

namespace {

v1::KernelInternalsSummary ToProto(const KernelInternalsSummary& s) {
  v1::KernelInternalsSummary ps;
  ps.set_groups(s.groups);
  ps.set_profiled_launches(s.profiled_launches);
  ps.set_profiled_time_ns(s.profiled_time_ns);
  ps.set_kernel_time_ns(s.kernel_time_ns);
  ps.set_compute_bound_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kCompute)]);
  ps.set_memory_bound_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kMemory)]);
  ps.set_latency_bound_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kLatency)]);
  ps.set_mixed_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kMixed)]);
  ps.set_undetermined_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kUndetermined)]);
  return ps;
}

}  // namespace

std::vector<Table> SectionTables(const Analysis& analysis) {
  std::vector<Table> tables = {BaselineTable(analysis.baseline)};
  if (!analysis.gpu_counters.devices.empty()) tables.push_back(UtilizationTable(analysis.gpu_counters));
  if (analysis.top_down.present) tables.push_back(TopDownTable(analysis.top_down, analysis.kernel_verdicts));
  return tables;
}

v1::Report ToReport(const Analysis& analysis, const std::string& trace_path) {
  v1::Report r;
  r.set_format_version(2);
  r.set_trace_path(trace_path);
  *r.mutable_summary() = analysis.summary;
  for (const Finding& f : analysis.findings) *r.add_findings() = ToProto(f);
  // The sections report.proto has no message for travel as tables (see report_proto.h).
  std::vector<Table> tables = analysis.tables;
  for (Table& t : SectionTables(analysis)) tables.push_back(std::move(t));
  for (const Table& t : tables) *r.add_tables() = ToProto(t);
  for (const std::string& w : analysis.warnings) r.add_warnings(w);
  for (const KernelVerdict& v : analysis.kernel_verdicts) *r.add_kernel_verdicts() = ToProto(v);
  const KernelInternalsSummary& s = analysis.kernel_internals;
  if (s.groups > 0) *r.mutable_kernel_internals() = ToProto(s);
  return r;
}

std::string ReportJson(const v1::Report& report) { return core::ProtoToJsonText(report); }

std::string RenderAnalysisJson(const Analysis& analysis, const std::string& trace_path) {
  return ReportJson(ToReport(analysis, trace_path));
}

}  // namespace cuscope::analysis
