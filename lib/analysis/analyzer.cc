#include "lib/analysis/analyzer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "lib/analysis/rules/rules.h"
#include "lib/core/terminal_text.h"

namespace cuscope::analysis {

bool Analysis::healthy() const { return worst() < Severity::kWarning; }

Severity Analysis::worst() const {
  Severity worst_seen = Severity::kInfo;
  for (const Finding& f : findings) worst_seen = std::max(worst_seen, f.severity);
  return worst_seen;
}

std::vector<Finding> RunRules(const Timeline& timeline, const Thresholds& thresholds) {
  using Rule = std::vector<Finding> (*)(const Timeline&, const Thresholds&);
  static constexpr Rule kRules[] = {GpuIdleRule, LaunchOverheadRule, SyncPointsRule,      CopiesRule,
                                    StreamsRule, HotKernelsRule,     KernelInternalsRule, ThrottleRule};
  std::vector<Finding> findings;
  for (Rule rule : kRules) {
    for (Finding& f : rule(timeline, thresholds)) findings.push_back(std::move(f));
  }
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.recoverable_ns > b.recoverable_ns;
  });
  return findings;
}

Analysis Analyze(const core::Trace& trace, const AnalyzeOptions& options) {
  Analysis out;
  const Timeline timeline = Timeline::Build(trace);
  v1::TraceSummary& s = out.summary;
  s.set_records(trace.record_count());
  s.set_kernels(timeline.kernel_count());
  s.set_replayed_kernels(timeline.replayed_kernel_count());
  s.set_memcpys(trace.memcpys.size());
  s.set_memsets(trace.memsets.size());
  s.set_api_calls(trace.api_calls.size());
  s.set_span_ns(timeline.span().length());
  for (const DeviceTimeline& d : timeline.devices()) {
    v1::DeviceSummary* ds = s.add_devices();
    ds->set_device(d.device);
    ds->set_active_ns(d.active.length());
    ds->set_busy_ns(d.busy_ns());
    // Metric collection (kernel replay) is neither busy nor idle for the program.
    const uint64_t counted = d.counted_active_ns();
    ds->set_busy_share(counted ? static_cast<double>(d.busy_ns()) / static_cast<double>(counted) : 0);
    ds->set_metrics_collection_ns(d.metrics_idle_ns());
    ds->set_kernels(d.kernel_count);
    ds->set_kernel_time_ns(d.kernel_time_ns);
  }
  s.set_truncated(trace.truncated());
  s.set_tail_bytes_dropped(trace.tail_bytes_dropped);
  if (trace.stats) s.set_records_dropped(trace.stats->records_dropped_by_cupti());

  if (trace.tail_bytes_dropped > 0) {
    out.warnings.push_back(absl::StrCat("the trace is cut: ", trace.tail_bytes_dropped,
                                        " bytes at its tail did not form a complete chunk and were dropped; the "
                                        "analysis covers the ",
                                        trace.chunks, " complete chunks (records up to the cut)"));
  }
  if (trace.corruption) {
    out.warnings.push_back(absl::StrCat("the trace is damaged after chunk ", trace.chunks, " (",
                                        trace.corruption->message(), "); everything after it is lost"));
  }
  if (trace.stats && (trace.stats->records_dropped_by_cupti() > 0 || trace.stats->buffers_refused_at_cap() > 0)) {
    // CUPTI counts what it could not store; with what was written that gives the share of the
    // timeline that is missing (records, not time: dropped records are spread over the capture).
    const uint64_t dropped = trace.stats->records_dropped_by_cupti();
    const uint64_t written = trace.stats->records_written();
    const double missing = dropped + written > 0 ? 100.0 * static_cast<double>(dropped) / static_cast<double>(dropped + written) : 0;
    out.warnings.push_back(absl::StrFormat(
        "%d records were dropped during capture, %.1f%% of all recorded activity (%d buffer requests refused at "
        "the %s memory cap): counts, busy time and gaps are understated by up to that share; raise "
        "CUSCOPE_BUFFER_POOL_CAP or narrow the capture with --delay/--duration",
        dropped, missing, trace.stats->buffers_refused_at_cap(),
        trace.header.config().buffer_pool_cap_bytes() > 0
            ? absl::StrFormat("%d MiB", trace.header.config().buffer_pool_cap_bytes() >> 20)
            : std::string("buffer pool")));
  }
  if (trace.stats && trace.stats->records_incomplete() > 0) {
    out.warnings.push_back(absl::StrCat(
        trace.stats->records_incomplete(),
        " operations were still running when the capture ended (the program exited or the capture window "
        "closed with work in flight): they have no end time and are not on the timeline"));
  }
  if (!trace.stats && !trace.truncated() && trace.chunks > 0) {
    out.warnings.push_back("the trace has no final statistics: the session may not have ended cleanly");
  }
  if (timeline.replayed_kernel_count() > 0) {
    out.warnings.push_back(absl::StrCat(timeline.replayed_kernel_count(),
                                        " replayed launches (metric collection) are left out of the timeline"));
  }
  // Metric collection while the timeline was recorded: in a top-down trace it all runs after the
  // window, and the top-down section says so instead.
  const IntervalSet captured_metrics = timeline.has_capture_windows()
                                           ? Intersect(timeline.metric_windows(), timeline.capture_windows())
                                           : timeline.metric_windows();
  if (!captured_metrics.empty()) {
    uint64_t windows = timeline.metric_window_count();
    if (timeline.has_capture_windows()) {
      windows = 0;
      for (const v1::CaptureWindow& w : trace.windows) {
        if (w.kind() == v1::WINDOW_KIND_METRICS && timeline.Captured(w.start_ns())) ++windows;
      }
    }
    out.warnings.push_back(absl::StrCat(
        "metric collection took ", FormatDuration(TotalLength(captured_metrics)), " (", windows,
        windows == 1 ? " replay window" : " replay windows",
        " and the launch calls of the profiled launches): that time is left out of GPU idle time and busy share; "
        "the profiled launch calls and any host call spanning them last longer than without profiling"));
  }

  for (const DeviceTimeline& d : timeline.devices()) {
    if (d.replayed_kernel_ns > 0 && d.replayed_kernel_ns >= d.kernel_time_ns) {
      out.warnings.push_back(absl::StrCat(
          "most of GPU ", d.device, "'s kernel time (", FormatDuration(d.replayed_kernel_ns), " of ",
          FormatDuration(d.replayed_kernel_ns + d.kernel_time_ns),
          ") is in launches replayed for metrics, which the timeline cannot place: the timeline findings describe "
          "the profiled run; profile without --metrics, or profile fewer launches (--launch-skip, --launch-count), "
          "for the program's own timeline"));
    }
  }
  out.findings = RunRules(timeline, options.thresholds);
  out.kernel_verdicts = JudgeKernels(timeline, options.thresholds);
  out.kernel_internals = SummarizeVerdicts(out.kernel_verdicts, timeline);
  out.baseline = ComputeBaseline(timeline);
  out.gpu_counters = AnalyzeGpuCounters(timeline, out.baseline, options.thresholds);
  out.top_down = BuildTopDown(timeline, out.kernel_verdicts);
  if (options.include_tables) {
    out.tables.push_back(KernelSummary(timeline));
    if (!trace.memcpys.empty() || !trace.memsets.empty()) out.tables.push_back(MemoryTimeSummary(timeline));
    out.tables.push_back(ApiSummary(timeline));
    out.tables.push_back(KernelExecutionSummary(timeline));
    if (!trace.counter_samples.empty()) out.tables.push_back(GpuMetricsSummary(timeline));
  }
  return out;
}

namespace {

std::string FormatNumber(const Number& n) {
  if (n.unit == "ns") return FormatDuration(ClampToU64(n.value));
  if (n.unit == "ratio") return FormatPercent(n.value);
  if (n.unit == "bytes") return FormatBytes(ClampToU64(n.value));
  if (n.unit == "1/s") return absl::StrFormat("%.0f/s", n.value);
  if (n.unit == "%") return absl::StrFormat("%.1f%%", n.value);
  if (n.unit == "FLOP/s" || n.unit == "Hz") return FormatSi(n.value, n.unit);
  if (n.unit == "FLOP/B") return absl::StrFormat("%.3g FLOP/B", n.value);
  if (n.unit == "cycles/inst" || n.unit == "waves") return absl::StrFormat("%.2f", n.value);
  if (n.unit == "warps") return absl::StrFormat("%.1f", n.value);
  if (n.unit.empty()) return absl::StrFormat("%g", n.value);
  return absl::StrFormat("%.0f", n.value);
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
  for (const MetricValue& m : v.metrics) {
    v1::Number* n = p.add_metrics();
    n->set_key(m.name);
    n->set_value(m.value);
    n->set_unit(m.unit);
  }
  p.set_recommendation(v.recommendation);
  p.set_recoverable_ns(v.recoverable_ns);
  return p;
}

// The kernel-internals section: each profiled kernel's verdict and the evidence, in a few lines.
// In a top-down trace the hot kernels' verdicts are in the top-down section; this one then lists
// only the profiled kernels that are not among them (none, normally).
std::string RenderKernelInternals(const Analysis& analysis) {
  const KernelInternalsSummary& s = analysis.kernel_internals;
  if (analysis.kernel_verdicts.empty()) return "";
  std::vector<size_t> shown;
  if (analysis.top_down.present) {
    shown = analysis.top_down.other_verdicts;
    if (shown.empty()) return "";
  } else {
    for (size_t i = 0; i < analysis.kernel_verdicts.size(); ++i) shown.push_back(i);
  }
  std::string out;
  if (analysis.top_down.present) {
    out = absl::StrCat("Other profiled kernels (not among the top-down's hot kernels): ", shown.size());
  } else {
    out = absl::StrCat("Kernel internals: ", s.groups, s.groups == 1 ? " profiled kernel, " : " profiled kernels, ",
                       s.profiled_launches, s.profiled_launches == 1 ? " launch" : " launches", " profiled");
    if (s.kernel_time_ns > 0) {
      const double total = static_cast<double>(s.kernel_time_ns);
      absl::StrAppend(&out, "; they take ", FormatPercent(static_cast<double>(s.profiled_time_ns) / total),
                      " of GPU kernel time");
      std::vector<std::string> parts;
      for (int b = 0; b < kBottleneckCount; ++b) {
        if (s.time_by_bottleneck[b] == 0) continue;
        parts.push_back(absl::StrCat(FormatPercent(static_cast<double>(s.time_by_bottleneck[b]) / total), " ",
                                     std::string(BottleneckName(static_cast<Bottleneck>(b)))));
      }
      if (!parts.empty()) absl::StrAppend(&out, " (", absl::StrJoin(parts, ", "), ")");
    }
  }
  out += ":\n\n";
  int rank = 0;
  for (size_t i : shown) {
    const KernelVerdict& v = analysis.kernel_verdicts[i];
    absl::StrAppend(&out, "  ", ++rank, ". ", v.Label(), ": ", std::string(BottleneckName(v.bottleneck)), " (",
                    FormatDuration(v.gpu_time_ns), ", ", FormatPercent(v.kernel_time_share), " of kernel time, ",
                    v.profiled_launches, v.profiled_launches == 1 ? " launch" : " launches", " profiled)\n");
    out += RenderVerdictDetails(v, "     ");
    out += "\n";
  }
  return out;
}

}  // namespace

std::vector<Table> SectionTables(const Analysis& analysis) {
  std::vector<Table> tables = {BaselineTable(analysis.baseline)};
  if (!analysis.gpu_counters.devices.empty()) tables.push_back(UtilizationTable(analysis.gpu_counters));
  if (analysis.top_down.present) tables.push_back(TopDownTable(analysis.top_down, analysis.kernel_verdicts));
  return tables;
}

std::string RenderAnalysisText(const Analysis& analysis, const std::string& trace_path, size_t top_rows) {
  const v1::TraceSummary& s = analysis.summary;
  // Names in findings come from the trace: each is escaped for the terminal where it is put in
  // (the CLI escapes the whole text once more, for the sections rendered elsewhere).
  const auto esc = [](std::string_view text) { return core::EscapeForTerminal(text); };
  std::string out = absl::StrCat("cuscope analyze ", esc(trace_path), ": ", s.records(), " records, ", s.kernels(),
                                 " kernels, ", s.memcpys(), " copies, ", s.api_calls(), " API calls over ",
                                 FormatDuration(s.span_ns()), "\n");
  out += RenderBaselineText(analysis.baseline);
  for (const std::string& w : analysis.warnings) absl::StrAppend(&out, "warning: ", esc(w), "\n");
  for (const v1::DeviceSummary& d : s.devices()) {
    const uint64_t metrics_ns = std::min(d.active_ns(), d.metrics_collection_ns());
    const uint64_t unobserved_ns = std::min(d.active_ns() - metrics_ns, analysis.baseline.UnobservedNs(d.device()));
    absl::StrAppend(&out, "GPU ", d.device(), ": busy ", FormatPercent(d.busy_share()), " of its active ",
                    FormatDuration(d.active_ns() - metrics_ns - unobserved_ns));
    if (metrics_ns > 0) absl::StrAppend(&out, " (without ", FormatDuration(metrics_ns), " of metric collection)");
    if (unobserved_ns > 0) {
      absl::StrAppend(&out, " (without ", FormatDuration(unobserved_ns), " outside the capture windows)");
    }
    absl::StrAppend(&out, " (", d.kernels(), " kernels, ", FormatDuration(d.kernel_time_ns()), " kernel time)\n");
  }
  out += "\n";
  if (analysis.healthy()) {
    absl::StrAppend(&out, "Nothing wrong found: no rule raised a warning or an error.\n");
    if (s.devices_size() == 0) absl::StrAppend(&out, "(the trace holds no GPU work)\n");
  }
  // The kernel-internals section (in a top-down trace, the top-down's hot kernels and their verdicts
  // first) goes under the hot-kernel list: after that finding, or after all findings when there is
  // none.
  const std::string internals =
      RenderTopDownText(analysis.top_down, analysis.kernel_verdicts) + RenderKernelInternals(analysis);
  bool internals_shown = internals.empty();
  if (!analysis.findings.empty()) {
    absl::StrAppend(&out, "Findings (most severe and most costly first):\n\n");
    int rank = 0;
    for (const Finding& f : analysis.findings) {
      absl::StrAppend(&out, ++rank, ". [", std::string(SeverityName(f.severity)), "] ", f.rule_id, ": ", esc(f.headline),
                      "\n");
      if (f.recoverable_ns > 0) absl::StrAppend(&out, "   could recover: up to ", FormatDuration(f.recoverable_ns), "\n");
      std::string numbers;
      std::vector<std::string> metrics;  // PerfWorks counter values: many, so wrapped
      for (const Number& n : f.numbers) {
        if (n.unit == "id") continue;
        if (n.key.find("__") != std::string::npos) {
          metrics.push_back(absl::StrCat(esc(n.key), "=", FormatNumber(n)));
          continue;
        }
        absl::StrAppend(&numbers, numbers.empty() ? "" : ", ", esc(n.key), "=", FormatNumber(n));
      }
      if (!numbers.empty()) absl::StrAppend(&out, "   numbers: ", numbers, "\n");
      if (!metrics.empty()) out += WrapItems(metrics, "   metrics: ", "     ");
      for (const Offender& o : f.offenders) {
        absl::StrAppend(&out, "   ", o.kind, ": ", esc(o.name), " (");
        if (o.count > 0) absl::StrAppend(&out, o.count, "x, ");
        absl::StrAppend(&out, FormatDuration(o.time_ns), ")\n");
      }
      for (const Span& sp : f.spans) {
        absl::StrAppend(&out, "   span: ", esc(sp.label), " [", sp.begin, " .. ", sp.end, "] ns (",
                        FormatDuration(sp.end > sp.begin ? sp.end - sp.begin : 0), ")\n");
      }
      absl::StrAppend(&out, "   advice: ", esc(f.recommendation), "\n\n");
      if (f.rule_id == "hot.kernels" && !internals_shown) {
        out += internals;
        internals_shown = true;
      }
    }
  }
  if (!internals_shown) out += internals;
  out += RenderGpuCountersText(analysis.gpu_counters);
  for (const Table& t : analysis.tables) absl::StrAppend(&out, RenderText(t, top_rows), "\n");
  return out;
}

v1::Report ToReport(const Analysis& analysis, const std::string& trace_path) {
  v1::Report r;
  r.set_format_version(1);
  r.set_trace_path(trace_path);
  *r.mutable_summary() = analysis.summary;
  for (const Finding& f : analysis.findings) {
    v1::Finding* pf = r.add_findings();
    pf->set_rule_id(f.rule_id);
    pf->set_severity(static_cast<v1::Severity>(static_cast<int>(f.severity)));
    pf->set_headline(f.headline);
    for (const Number& n : f.numbers) {
      v1::Number* pn = pf->add_numbers();
      pn->set_key(n.key);
      pn->set_value(n.value);
      pn->set_unit(n.unit);
    }
    for (const Span& sp : f.spans) {
      v1::Span* ps = pf->add_spans();
      ps->set_start_ns(sp.begin);
      ps->set_end_ns(sp.end);
      ps->set_label(sp.label);
    }
    for (const Offender& o : f.offenders) {
      v1::Offender* po = pf->add_offenders();
      po->set_kind(o.kind);
      po->set_name(o.name);
      po->set_count(o.count);
      po->set_time_ns(o.time_ns);
    }
    pf->set_recommendation(f.recommendation);
    pf->set_recoverable_ns(f.recoverable_ns);
  }
  // The sections report.proto has no message for travel as tables (see analyzer.h).
  std::vector<Table> tables = analysis.tables;
  for (Table& t : SectionTables(analysis)) tables.push_back(std::move(t));
  for (const Table& t : tables) {
    v1::Table* pt = r.add_tables();
    pt->set_name(t.name);
    pt->set_title(t.title);
    for (const Column& c : t.columns) pt->add_columns(c.name);
    for (const auto& row : t.rows) {
      v1::TableRow* pr = pt->add_rows();
      for (const std::string& cell : row) pr->add_cells(cell);
    }
  }
  for (const std::string& w : analysis.warnings) r.add_warnings(w);
  for (const KernelVerdict& v : analysis.kernel_verdicts) *r.add_kernel_verdicts() = ToProto(v);
  const KernelInternalsSummary& s = analysis.kernel_internals;
  if (s.groups > 0) {
    v1::KernelInternalsSummary* ps = r.mutable_kernel_internals();
    ps->set_groups(s.groups);
    ps->set_profiled_launches(s.profiled_launches);
    ps->set_profiled_time_ns(s.profiled_time_ns);
    ps->set_kernel_time_ns(s.kernel_time_ns);
    ps->set_compute_bound_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kCompute)]);
    ps->set_memory_bound_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kMemory)]);
    ps->set_latency_bound_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kLatency)]);
    ps->set_mixed_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kMixed)]);
    ps->set_undetermined_ns(s.time_by_bottleneck[static_cast<int>(Bottleneck::kUndetermined)]);
  }
  return r;
}

std::string RenderAnalysisJson(const Analysis& analysis, const std::string& trace_path) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(ToReport(analysis, trace_path), &json, options);
  if (!status.ok()) return absl::StrCat("{\"error\":", JsonQuote(std::string(status.message())), "}");
  return json;
}

}  // namespace cuscope::analysis
