#include "lib/report/report_data.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/launch_sites.h"
#include "lib/analysis/tables.h"
#include "lib/core/kernel_names.h"
#include "lib/core/kernel_selection.h"
#include "lib/report/analysis_json.h"
#include "lib/report/json_writer.h"
#include "lib/report/timeline_lanes.h"

namespace cuscope::report {
namespace {

using analysis::Timeline;

// The time axis of the document: every time in it is nanoseconds from `origin`, the start of the
// trace's span.
struct TimeAxis {
  uint64_t origin = 0;
  uint64_t span = 0;
  uint64_t Relative(uint64_t t) const { return t > origin ? t - origin : 0; }
};

// A kernel on the timeline that has no metric rows, with its launches and their time.
struct UnprofiledKernel {
  std::string_view name;
  uint64_t count = 0;
  uint64_t time_ns = 0;
};

// "session" and "devices": the run, from the trace header.
void WriteRun(const core::Trace& trace, const TimeAxis& axis, JsonWriter* w) {
  const v1::Session& session = trace.header.session();
  w->Key("session").BeginObject().Field("host", session.host()).Field("pid", static_cast<uint64_t>(session.pid()));
  std::vector<std::string> command(session.command_line().begin(), session.command_line().end());
  w->Field("command", absl::StrJoin(command, " ")).Field("library_version", session.library_version());
  w->Field("origin_ns", axis.origin).EndObject();  // the session start, on CUPTI's clock
  w->Key("devices").BeginArray();
  for (const v1::Device& d : trace.header.devices()) {
    w->BeginObject().Field("id", static_cast<uint64_t>(d.id())).Field("name", d.name());
    w->Field("compute_capability", absl::StrCat(d.compute_capability_major(), ".", d.compute_capability_minor()));
    w->Field("sm_count", static_cast<uint64_t>(d.sm_count()));
    w->Field("peak_dram_bytes_per_second", static_cast<double>(d.peak_dram_bytes_per_second()));
    w->Field("peak_fp32_flops", d.peak_fp32_flops()).Field("peak_fp64_flops", d.peak_fp64_flops());
    w->Field("peak_fp16_flops", d.peak_fp16_flops()).Field("peak_fp16_tensor_flops", d.peak_fp16_tensor_flops());
    w->EndObject();
  }
  w->EndArray();
}

// "summary": report.proto's TraceSummary.
void WriteSummary(const v1::TraceSummary& s, JsonWriter* w) {
  w->Key("summary").BeginObject().Field("records", s.records()).Field("kernels", s.kernels());
  w->Field("replayed_kernels", s.replayed_kernels()).Field("memcpys", s.memcpys()).Field("memsets", s.memsets());
  w->Field("api_calls", s.api_calls()).Field("span_ns", s.span_ns()).Field("truncated", s.truncated());
  w->Field("records_dropped", s.records_dropped()).Key("devices").BeginArray();
  for (const v1::DeviceSummary& d : s.devices()) {
    w->BeginObject().Field("device", static_cast<uint64_t>(d.device())).Field("active_ns", d.active_ns());
    w->Field("busy_ns", d.busy_ns()).Field("busy_share", d.busy_share()).Field("kernels", d.kernels());
    w->Field("kernel_time_ns", d.kernel_time_ns()).Field("metrics_collection_ns", d.metrics_collection_ns());
    w->Field("counted_active_ns", d.counted_active_ns());
    w->EndObject();
  }
  w->EndArray().EndObject();
}

void WriteKernelVerdicts(const std::vector<analysis::KernelVerdict>& verdicts, JsonWriter* w) {
  w->Key("kernel_verdicts").BeginArray();
  for (const analysis::KernelVerdict& v : verdicts) {
    w->BeginObject().Field("label", core::ShortKernelName(v.name)).Field("name", v.name);
    if (v.launch_known) w->Field("grid", v.GridText()).Field("block", v.BlockText());
    w->Field("device", static_cast<uint64_t>(v.device));
    w->Field("bottleneck", analysis::BottleneckName(v.bottleneck)).Field("reason", v.reason);
    w->Field("gpu_time_ns", v.gpu_time_ns).Field("kernel_time_share", v.kernel_time_share);
    w->Field("profiled_launches", v.profiled_launches).Field("occupancy_note", v.occupancy_note);
    w->Field("stall_note", v.stall_note).Field("roofline_note", v.roofline_note);
    w->Field("recommendation", v.recommendation).EndObject();
  }
  w->EndArray();
}

// The kernels on the timeline without a verdict (no metric rows), most time first.
std::vector<UnprofiledKernel> UnprofiledKernels(const core::Trace& trace, const Timeline& timeline,
                                                const std::vector<analysis::KernelVerdict>& verdicts) {
  absl::flat_hash_set<std::string> profiled_names;
  for (const analysis::KernelVerdict& v : verdicts) profiled_names.insert(v.name);
  std::map<std::string_view, std::pair<uint64_t, uint64_t>> unprofiled;  // name -> (count, time)
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k)) continue;
    const std::string_view name = timeline.KernelName(k);
    if (profiled_names.contains(absl::string_view(name.data(), name.size()))) continue;
    auto& [count, time] = unprofiled[name];
    ++count;
    time += k.end > k.start ? k.end - k.start : 0;
  }
  std::vector<UnprofiledKernel> ranked;
  ranked.reserve(unprofiled.size());
  for (const auto& [name, count_time] : unprofiled) ranked.push_back({name, count_time.first, count_time.second});
  std::sort(ranked.begin(), ranked.end(),
            [](const UnprofiledKernel& a, const UnprofiledKernel& b) { return a.time_ns > b.time_ns; });
  return ranked;
}

void WriteCallPathNode(const analysis::CallPathNode& n, JsonWriter* w) {
  w->BeginObject().Field("name", n.name).Field("time_ns", n.time_ns).Field("launches", n.launches);
  w->Key("children").BeginArray();
  for (const analysis::CallPathNode& c : n.children) WriteCallPathNode(c, w);
  w->EndArray().EndObject();
}

// "call_paths": GPU time by call path (--stacks), the flame graph's tree; null without stacks.
void WriteCallPaths(const core::Trace& trace, const Timeline& timeline, JsonWriter* w) {
  w->Key("call_paths");
  if (trace.launch_stacks.empty() && trace.graph_nodes.empty()) {
    w->Null();
    return;
  }
  WriteCallPathNode(analysis::BuildCallPathTree(timeline), w);
}

// "roofline": a point per profiled kernel with FLOP counts, DRAM bytes and a duration; the others
// under "not_measured" with the reason, profiled ones first, then `unprofiled` (at most
// `max_not_measured` of them).
void WriteRoofline(const std::vector<analysis::KernelVerdict>& verdicts,
                   const std::vector<UnprofiledKernel>& unprofiled, size_t max_not_measured, JsonWriter* w) {
  w->Key("roofline").BeginObject().Key("points").BeginArray();
  std::vector<std::pair<std::string, std::string>> not_measured;  // label, why
  for (const analysis::KernelVerdict& v : verdicts) {
    const analysis::RooflinePoint& r = v.roofline;
    const std::string label = absl::StrCat(
        core::ShortKernelName(v.name),
        v.launch_known ? absl::StrCat(" [grid ", v.GridText(), ", block ", v.BlockText(), "]") : std::string());
    if (!r.present || !r.intensity || *r.intensity <= 0 || r.flop_per_second <= 0) {
      not_measured.emplace_back(label, !r.present ? "profiled without the roofline metrics (FLOP counts, DRAM bytes)"
                                       : !r.intensity ? "no DRAM byte count (dram__bytes.sum)"
                                                      : "no floating-point work counted");
      continue;
    }
    w->BeginObject().Field("label", label).Field("device", static_cast<uint64_t>(v.device));
    w->Field("intensity", *r.intensity).Field("flop_per_second", r.flop_per_second);
    w->Field("precision", r.precision).Field("fp32_flop", r.fp32_flop).Field("fp64_flop", r.fp64_flop);
    w->Field("fp16_flop", r.fp16_flop).Key("dram_bytes");
    r.dram_bytes ? w->Number(*r.dram_bytes) : w->Null();
    w->Key("roof_pct");
    r.roof_pct ? w->Number(*r.roof_pct) : w->Null();
    w->Key("tensor_pipe_pct");
    r.tensor_pipe_pct ? w->Number(*r.tensor_pipe_pct) : w->Null();
    w->Field("gpu_time_ns", v.gpu_time_ns).Field("kernel_time_share", v.kernel_time_share);
    w->Field("bottleneck", analysis::BottleneckName(v.bottleneck)).EndObject();
  }
  w->EndArray();
  w->Key("not_measured").BeginArray();
  for (const auto& [label, why] : not_measured) w->BeginObject().Field("label", label).Field("why", why).EndObject();
  for (size_t i = 0; i < unprofiled.size() && i < max_not_measured; ++i) {
    w->BeginObject().Field("label", core::ShortKernelName(unprofiled[i].name));
    w->Field("why", "no metric rows (not profiled with --metrics)").Field("count", unprofiled[i].count);
    w->Field("time_ns", unprofiled[i].time_ns).EndObject();
  }
  w->EndArray();
  w->Field("not_measured_more",
           static_cast<uint64_t>(unprofiled.size() > max_not_measured ? unprofiled.size() - max_not_measured : 0));
  w->EndObject();
}

// The baseline first, then the counters over time and the top-down, as `cuscope analyze` orders
// them; then the analyzer's summary tables, and the kernel metrics when the trace has any.
std::vector<analysis::Table> PageTables(const core::Trace& trace, const Timeline& timeline,
                                        const analysis::Analysis& analysis) {
  std::vector<analysis::Table> tables = analysis::SectionTables(analysis);
  tables.insert(tables.end(), analysis.tables.begin(), analysis.tables.end());
  if (!trace.metrics.empty()) tables.push_back(analysis::KernelMetricsSummary(timeline));
  return tables;
}

// A lane's slices as drawn: merged when the lane has more than its `share` of the slice budget,
// else one slice per recorded item.
std::vector<Slice> DrawnSlices(const std::vector<SliceInput>& items, const TimeAxis& axis, uint64_t bucket_ns,
                               bool merge) {
  if (merge) return DownsampleLane(items, axis.origin, bucket_ns);
  std::vector<Slice> slices;
  slices.reserve(items.size());
  for (const SliceInput& item : items) {
    const uint64_t start = std::max(item.start, axis.origin);
    const uint64_t length = item.end > start ? item.end - start : 0;
    slices.push_back(Slice{start - axis.origin, length, item.name, item.category, 1, length});
  }
  return slices;
}

// "timeline": every lane, downsampled within the slice budget of `options`, and the name table.
void WriteTimeline(std::vector<Lane> lanes, const NameTable& names, const TimeAxis& axis,
                   const ReportDataOptions& options, JsonWriter* w) {
  const size_t share = lanes.empty() ? options.max_slices : std::max<size_t>(1, options.max_slices / lanes.size());
  const size_t buckets = std::clamp(share / 2, options.min_buckets_per_lane, options.max_buckets_per_lane);
  const uint64_t bucket_ns = std::max<uint64_t>(1, (axis.span + buckets - 1) / buckets);
  uint64_t recorded = 0, drawn = 0, merged_lanes = 0;
  w->Key("timeline").BeginObject().Field("span_ns", axis.span).Field("bucket_ns", bucket_ns).Key("lanes").BeginArray();
  for (Lane& lane : lanes) {
    // Ops come in start order per device; calls and ranges per thread: sorting is a no-op in practice.
    std::stable_sort(lane.items.begin(), lane.items.end(),
                     [](const SliceInput& a, const SliceInput& b) { return a.start < b.start; });
    const bool merge = lane.items.size() > share;
    const std::vector<Slice> slices = DrawnSlices(lane.items, axis, bucket_ns, merge);
    if (merge) ++merged_lanes;
    recorded += lane.items.size();
    drawn += slices.size();
    w->BeginObject().Field("group", lane.group).Field("label", lane.label).Field("kind", lane.kind);
    w->Field("recorded", static_cast<uint64_t>(lane.items.size())).Field("merged", merge);
    // Flat: start, duration, name, category, count, busy_ns per slice.
    w->Key("slices").BeginArray();
    for (const Slice& sl : slices) {
      w->Uint(sl.start).Uint(sl.duration).Uint(sl.name).Uint(static_cast<uint64_t>(sl.category)).Uint(sl.count);
      w->Uint(sl.busy_ns);
    }
    w->EndArray().EndObject();
  }
  w->EndArray().Field("recorded_slices", recorded).Field("drawn_slices", drawn).Field("merged_lanes", merged_lanes);
  w->Key("names").BeginArray();
  for (const std::string& n : names.all()) w->String(n);
  w->EndArray().EndObject();
}

// "utilization": per device, the busy share of each of `buckets` equal stretches of the span.
void WriteUtilization(const Timeline& timeline, const TimeAxis& axis, size_t buckets, JsonWriter* w) {
  const size_t ubuckets = std::max<size_t>(1, buckets);
  const uint64_t origin = axis.origin, span = axis.span;
  const double width = span > 0 ? static_cast<double>(span) / static_cast<double>(ubuckets) : 1;
  w->Key("utilization").BeginObject().Field("bucket_ns", width).Key("devices").BeginArray();
  for (const analysis::DeviceTimeline& d : timeline.devices()) {
    w->BeginObject().Field("device", static_cast<uint64_t>(d.device)).Key("busy").BeginArray();
    for (size_t b = 0; b < ubuckets && span > 0; ++b) {
      const uint64_t b0 = origin + static_cast<uint64_t>(width * static_cast<double>(b));
      const uint64_t b1 =
          b + 1 == ubuckets ? origin + span : origin + static_cast<uint64_t>(width * static_cast<double>(b + 1));
      const uint64_t covered = b1 > b0 ? intervals::CoveredLength(d.busy, {b0, b1}) : 0;
      // Three decimals: a 1000-point series stays small and 0.1% is below what the chart shows.
      w->Number(b1 > b0 ? static_cast<double>(static_cast<uint64_t>(
                              1000.0 * static_cast<double>(covered) / static_cast<double>(b1 - b0) + 0.5)) /
                              1000.0
                        : 0.0);
    }
    w->EndArray().EndObject();
  }
  w->EndArray().EndObject();
}

}  // namespace

std::string BuildReportData(const Timeline& timeline, const analysis::Analysis& analysis,
                            const std::string& trace_path, const ReportDataOptions& options) {
  // The analysis carries what was found, not the events: the span's start, the lanes, the devices'
  // busy intervals, the kernels without metric rows and the kernel metrics table come from the
  // timeline the analysis ran on.
  const core::Trace& trace = timeline.trace();
  // Times on the page count from the session start, as analyze's, dump's and the exports' do (the
  // first activity when the header has no start, or one after it).
  const uint64_t session_start = trace.header.session().start_time_ns();
  const uint64_t origin =
      session_start != 0 && session_start <= timeline.span().begin ? session_start : timeline.span().begin;
  const TimeAxis axis{origin, timeline.span().end - origin};
  JsonWriter w;
  w.BeginObject().Field("format", "cuscope-report/1").Field("trace", trace_path);
  WriteRun(trace, axis, &w);
  // From the analysis.
  WriteSummary(analysis.summary, &w);
  w.Key("warnings").BeginArray();
  for (const std::string& warning : analysis.warnings) w.String(warning);
  w.EndArray();
  WriteFindingsJson(analysis.findings, axis.origin, /*with_spans=*/true, &w);
  WriteKernelVerdicts(analysis.kernel_verdicts, &w);
  WriteRoofline(analysis.kernel_verdicts, UnprofiledKernels(trace, timeline, analysis.kernel_verdicts),
                options.max_not_measured, &w);
  WriteTablesJson(PageTables(trace, timeline, analysis), options.max_table_rows, &w);
  // From the timeline.
  NameTable names;
  std::vector<Lane> lanes = CollectLanes(trace, timeline, &names);
  WriteTimeline(std::move(lanes), names, axis, options, &w);
  WriteUtilization(timeline, axis, options.utilization_buckets, &w);
  WriteCallPaths(trace, timeline, &w);
  w.EndObject();
  return w.Take();
}

}  // namespace cuscope::report
