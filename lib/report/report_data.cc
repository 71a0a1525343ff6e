#include "lib/report/report_data.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/tables.h"
#include "lib/core/kernel_selection.h"
#include "lib/report/json.h"

namespace cuscope::report {
namespace {

using analysis::Timeline;

// The document's name table: every slice refers to its name by index, so a name repeated in
// 100,000 slices is written once.
class Names {
 public:
  uint32_t Intern(std::string_view name) {
    auto [it, inserted] = index_.try_emplace(std::string(name), static_cast<uint32_t>(names_.size()));
    if (inserted) names_.emplace_back(name);
    return it->second;
  }
  const std::vector<std::string>& all() const { return names_; }

 private:
  absl::flat_hash_map<std::string, uint32_t> index_;
  std::vector<std::string> names_;
};

struct Lane {
  std::string group;  // "GPU 0 · NVIDIA H200", "thread 857 (pid 857)"
  std::string label;  // "stream 7", "CUDA calls", "NVTX"
  std::string kind;   // "gpu", "api", "nvtx"
  std::vector<SliceInput> items;
};

SliceCategory CopyCategory(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD:
      return SliceCategory::kCopyHtoD;
    case v1::COPY_KIND_DTOH:
      return SliceCategory::kCopyDtoH;
    default:
      return SliceCategory::kCopyOther;
  }
}

const char* CopyName(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD:
      return "memcpy HtoD";
    case v1::COPY_KIND_DTOH:
      return "memcpy DtoH";
    case v1::COPY_KIND_DTOD:
      return "memcpy DtoD";
    case v1::COPY_KIND_HTOH:
      return "memcpy HtoH";
    case v1::COPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

SliceCategory ApiCategoryOf(analysis::ApiCategory c) {
  switch (c) {
    case analysis::ApiCategory::kSync:
      return SliceCategory::kApiSync;
    case analysis::ApiCategory::kCopy:
      return SliceCategory::kApiCopy;
    case analysis::ApiCategory::kAlloc:
      return SliceCategory::kApiAlloc;
    case analysis::ApiCategory::kSetup:
      return SliceCategory::kApiSetup;
    case analysis::ApiCategory::kLaunch:
      return SliceCategory::kApiLaunch;
    case analysis::ApiCategory::kOther:
      return SliceCategory::kApiOther;
  }
  return SliceCategory::kApiOther;
}

// Splits intervals in start order into nesting levels (a call inside a call goes one level down),
// capped at `max_depth` levels: the last level takes everything deeper.
template <typename Item, typename Fn>
void ByDepth(const std::vector<Item>& items, size_t max_depth, Fn&& level_of) {
  std::vector<uint64_t> open_ends;
  for (const Item& item : items) {
    const auto [start, end] = level_of.interval(item);
    while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
    level_of.add(std::min(open_ends.size(), max_depth - 1), item);
    open_ends.push_back(std::max(start, end));
  }
}

std::string ColumnTypeName(analysis::ColumnType t) {
  switch (t) {
    case analysis::ColumnType::kText:
      return "text";
    case analysis::ColumnType::kInteger:
      return "integer";
    case analysis::ColumnType::kPercent:
      return "percent";
    case analysis::ColumnType::kDecimal:
      return "decimal";
  }
  return "text";
}

}  // namespace

std::vector<Slice> DownsampleLane(const std::vector<SliceInput>& items, uint64_t origin, uint64_t bucket_ns) {
  std::vector<Slice> out;
  if (bucket_ns == 0) bucket_ns = 1;
  struct Group {
    uint64_t bucket = 0;
    uint64_t start = 0, end = 0, busy = 0;
    uint32_t count = 0;
    // Time per name inside the group, for the name it is shown under (few distinct names in practice).
    std::vector<std::pair<uint32_t, uint64_t>> names;
    SliceCategory category = SliceCategory::kKernel;
  } group;
  const auto flush = [&]() {
    if (group.count == 0) return;
    uint32_t best = group.names.front().first;
    uint64_t best_time = 0;
    for (const auto& [name, time] : group.names) {
      if (time > best_time) {
        best = name;
        best_time = time;
      }
    }
    out.push_back(Slice{group.start - origin, group.end - group.start, best, group.category, group.count, group.busy});
    group = Group();
  };
  for (const SliceInput& item : items) {
    const uint64_t start = std::max(item.start, origin);
    const uint64_t end = std::max(start, item.end);
    const uint64_t length = end - start;
    if (length >= bucket_ns) {
      flush();
      out.push_back(Slice{start - origin, length, item.name, item.category, 1, length});
      continue;
    }
    const uint64_t bucket = (start - origin) / bucket_ns;
    if (group.count > 0 && group.bucket != bucket) flush();
    if (group.count == 0) {
      group.bucket = bucket;
      group.start = start;
      group.category = item.category;
    }
    group.end = std::max(group.end, end);
    group.busy += length;
    ++group.count;
    auto it = std::find_if(group.names.begin(), group.names.end(), [&](const auto& p) { return p.first == item.name; });
    if (it != group.names.end()) {
      it->second += length;
    } else if (group.names.size() < 16) {
      group.names.emplace_back(item.name, length);
    }
  }
  flush();
  return out;
}

std::string BuildReportData(const core::Trace& trace, const analysis::Analysis& analysis, const std::string& trace_path,
                            const ReportDataOptions& options) {
  const Timeline timeline = Timeline::Build(trace);
  const uint64_t origin = timeline.span().begin;
  const uint64_t span = timeline.span().length();
  const auto rel = [&](uint64_t t) { return t > origin ? t - origin : 0; };
  Names names;
  JsonWriter w;
  w.BeginObject().Field("format", "cuscope-report/1").Field("trace", trace_path);

  // ---- The run: session and devices.
  const v1::Session& session = trace.header.session();
  w.Key("session").BeginObject().Field("host", session.host()).Field("pid", static_cast<uint64_t>(session.pid()));
  std::vector<std::string> command(session.command_line().begin(), session.command_line().end());
  w.Field("command", absl::StrJoin(command, " ")).Field("library_version", session.library_version());
  w.Field("origin_ns", absl::StrCat(origin)).EndObject();
  w.Key("devices").BeginArray();
  for (const v1::Device& d : trace.header.devices()) {
    w.BeginObject().Field("id", static_cast<uint64_t>(d.id())).Field("name", d.name());
    w.Field("compute_capability", absl::StrCat(d.compute_capability_major(), ".", d.compute_capability_minor()));
    w.Field("sm_count", static_cast<uint64_t>(d.sm_count()));
    w.Field("peak_dram_bytes_per_second", static_cast<double>(d.peak_dram_bytes_per_second()));
    w.Field("peak_fp32_flops", d.peak_fp32_flops()).Field("peak_fp64_flops", d.peak_fp64_flops());
    w.Field("peak_fp16_flops", d.peak_fp16_flops()).Field("peak_fp16_tensor_flops", d.peak_fp16_tensor_flops());
    w.EndObject();
  }
  w.EndArray();

  // ---- The analysis.
  const v1::TraceSummary& s = analysis.summary;
  w.Key("summary").BeginObject().Field("records", s.records()).Field("kernels", s.kernels());
  w.Field("replayed_kernels", s.replayed_kernels()).Field("memcpys", s.memcpys()).Field("memsets", s.memsets());
  w.Field("api_calls", s.api_calls()).Field("span_ns", s.span_ns()).Field("truncated", s.truncated());
  w.Field("records_dropped", s.records_dropped()).Key("devices").BeginArray();
  for (const v1::DeviceSummary& d : s.devices()) {
    w.BeginObject().Field("device", static_cast<uint64_t>(d.device())).Field("active_ns", d.active_ns());
    w.Field("busy_ns", d.busy_ns()).Field("busy_share", d.busy_share()).Field("kernels", d.kernels());
    w.Field("kernel_time_ns", d.kernel_time_ns()).Field("metrics_collection_ns", d.metrics_collection_ns());
    w.EndObject();
  }
  w.EndArray().EndObject();
  w.Key("warnings").BeginArray();
  for (const std::string& warning : analysis.warnings) w.String(warning);
  w.EndArray();

  w.Key("findings").BeginArray();
  for (const analysis::Finding& f : analysis.findings) {
    w.BeginObject().Field("rule_id", f.rule_id).Field("severity", analysis::SeverityName(f.severity));
    w.Field("headline", f.headline).Field("recoverable_ns", f.recoverable_ns);
    w.Field("recommendation", f.recommendation).Key("numbers").BeginArray();
    for (const analysis::Number& n : f.numbers) {
      w.BeginObject().Field("key", n.key).Field("value", n.value).Field("unit", n.unit).EndObject();
    }
    w.EndArray().Key("offenders").BeginArray();
    for (const analysis::Offender& o : f.offenders) {
      w.BeginObject().Field("kind", o.kind).Field("name", o.name);
      if (o.kind == "kernel") w.Field("display", core::DemangleName(o.name));
      w.Field("count", o.count).Field("time_ns", o.time_ns).EndObject();
    }
    w.EndArray().Key("spans").BeginArray();
    for (const analysis::Span& sp : f.spans) {
      w.BeginObject().Field("start", rel(sp.begin)).Field("end", rel(std::max(sp.begin, sp.end)));
      w.Field("label", sp.label).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndArray();

  w.Key("kernel_verdicts").BeginArray();
  for (const analysis::KernelVerdict& v : analysis.kernel_verdicts) {
    w.BeginObject().Field("label", core::DemangleName(v.name)).Field("name", v.name);
    if (v.launch_known) w.Field("grid", v.GridText()).Field("block", v.BlockText());
    w.Field("device", static_cast<uint64_t>(v.device));
    w.Field("bottleneck", analysis::BottleneckName(v.bottleneck)).Field("reason", v.reason);
    w.Field("gpu_time_ns", v.gpu_time_ns).Field("kernel_time_share", v.kernel_time_share);
    w.Field("profiled_launches", v.profiled_launches).Field("occupancy_note", v.occupancy_note);
    w.Field("stall_note", v.stall_note).Field("roofline_note", v.roofline_note);
    w.Field("recommendation", v.recommendation).EndObject();
  }
  w.EndArray();

  // ---- Roofline: the profiled kernels that have FLOP counts, DRAM bytes and a duration.
  w.Key("roofline").BeginObject().Key("points").BeginArray();
  absl::flat_hash_set<std::string> profiled_names;
  std::vector<std::pair<std::string, std::string>> not_measured;  // label, why
  for (const analysis::KernelVerdict& v : analysis.kernel_verdicts) {
    profiled_names.insert(v.name);
    const analysis::RooflinePoint& r = v.roofline;
    const std::string label = absl::StrCat(
        core::DemangleName(v.name),
        v.launch_known ? absl::StrCat(" [grid ", v.GridText(), ", block ", v.BlockText(), "]") : std::string());
    if (!r.present || !r.intensity || *r.intensity <= 0 || r.flop_per_second <= 0) {
      not_measured.emplace_back(label, !r.present ? "profiled without the roofline metrics (FLOP counts, DRAM bytes)"
                                       : !r.intensity ? "no DRAM byte count (dram__bytes.sum)"
                                                      : "no floating-point work counted");
      continue;
    }
    w.BeginObject().Field("label", label).Field("device", static_cast<uint64_t>(v.device));
    w.Field("intensity", *r.intensity).Field("flop_per_second", r.flop_per_second);
    w.Field("precision", r.precision).Field("fp32_flop", r.fp32_flop).Field("fp64_flop", r.fp64_flop);
    w.Field("fp16_flop", r.fp16_flop).Key("dram_bytes");
    r.dram_bytes ? w.Number(*r.dram_bytes) : w.Null();
    w.Key("roof_pct");
    r.roof_pct ? w.Number(*r.roof_pct) : w.Null();
    w.Key("tensor_pipe_pct");
    r.tensor_pipe_pct ? w.Number(*r.tensor_pipe_pct) : w.Null();
    w.Field("gpu_time_ns", v.gpu_time_ns).Field("kernel_time_share", v.kernel_time_share);
    w.Field("bottleneck", analysis::BottleneckName(v.bottleneck)).EndObject();
  }
  w.EndArray();
  // Kernels without metric rows, most time first.
  std::map<std::string_view, std::pair<uint64_t, uint64_t>> unprofiled;  // name -> (count, time)
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k)) continue;
    const std::string_view name = timeline.KernelName(k);
    if (profiled_names.contains(absl::string_view(name.data(), name.size()))) continue;
    auto& [count, time] = unprofiled[name];
    ++count;
    time += k.end > k.start ? k.end - k.start : 0;
  }
  std::vector<std::pair<std::string_view, std::pair<uint64_t, uint64_t>>> ranked(unprofiled.begin(), unprofiled.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  w.Key("not_measured").BeginArray();
  for (const auto& [label, why] : not_measured) w.BeginObject().Field("label", label).Field("why", why).EndObject();
  for (size_t i = 0; i < ranked.size() && i < options.max_not_measured; ++i) {
    w.BeginObject().Field("label", core::DemangleName(ranked[i].first));
    w.Field("why", "no metric rows (not profiled with --metrics)").Field("count", ranked[i].second.first);
    w.Field("time_ns", ranked[i].second.second).EndObject();
  }
  w.EndArray();
  w.Field(
      "not_measured_more",
      static_cast<uint64_t>(ranked.size() > options.max_not_measured ? ranked.size() - options.max_not_measured : 0));
  w.EndObject();

  // ---- Tables.
  // The baseline first, then the counters over time and the top-down, as `cuscope analyze` orders
  // them; then the analyzer's summary tables.
  std::vector<analysis::Table> tables = analysis::SectionTables(analysis);
  tables.insert(tables.end(), analysis.tables.begin(), analysis.tables.end());
  if (!trace.metrics.empty()) tables.push_back(analysis::KernelMetricsSummary(timeline));
  w.Key("tables").BeginArray();
  for (const analysis::Table& t : tables) {
    w.BeginObject().Field("name", t.name).Field("title", t.title).Key("columns").BeginArray();
    for (const analysis::Column& c : t.columns) {
      w.BeginObject().Field("name", c.name).Field("type", ColumnTypeName(c.type)).EndObject();
    }
    w.EndArray().Field("total_rows", static_cast<uint64_t>(t.rows.size())).Key("rows").BeginArray();
    for (size_t r = 0; r < t.rows.size() && r < options.max_table_rows; ++r) {
      w.BeginArray();
      for (const std::string& cell : t.rows[r]) w.String(cell);
      w.EndArray();
    }
    w.EndArray().EndObject();
  }
  w.EndArray();

  // ---- Timeline lanes.
  std::vector<Lane> lanes;
  absl::flat_hash_map<uint32_t, uint32_t> kernel_name_of_signature;
  for (const analysis::DeviceTimeline& d : timeline.devices()) {
    std::string group = absl::StrCat("GPU ", d.device);
    for (const v1::Device& dev : trace.header.devices()) {
      if (dev.id() == d.device && !dev.name().empty()) absl::StrAppend(&group, " · ", dev.name());
    }
    std::map<uint32_t, size_t> lane_of_stream;
    for (analysis::OpRef op : d.ops) {
      const uint32_t stream = timeline.OpStream(op);
      auto [it, inserted] = lane_of_stream.try_emplace(stream, lanes.size());
      if (inserted) lanes.push_back(Lane{group, absl::StrCat("stream ", stream), "gpu", {}});
      const analysis::Interval iv = timeline.OpInterval(op);
      SliceInput item{iv.begin, iv.end, 0, SliceCategory::kKernel};
      switch (op.kind()) {
        case analysis::OpKind::kKernel: {
          const core::KernelRow& k = trace.kernels[op.index()];
          auto [nit, new_sig] = kernel_name_of_signature.try_emplace(k.signature, 0);
          if (new_sig) nit->second = names.Intern(core::DemangleName(timeline.KernelName(k)));
          item.name = nit->second;
          break;
        }
        case analysis::OpKind::kMemcpy: {
          const core::MemcpyRecord& m = trace.memcpys[op.index()];
          item.name = names.Intern(CopyName(m.copy_kind));
          item.category = CopyCategory(m.copy_kind);
          break;
        }
        case analysis::OpKind::kMemset:
          item.name = names.Intern("memset");
          item.category = SliceCategory::kMemset;
          break;
      }
      lanes[it->second].items.push_back(item);
    }
  }
  constexpr size_t kMaxDepth = 3;
  for (const analysis::ThreadTimeline& t : timeline.threads()) {
    const std::string group = timeline.ThreadLabel(t.thread);
    std::vector<size_t> depth_lane;
    struct ApiLevels {
      const core::Trace& trace;
      const Timeline& timeline;
      Names& names;
      std::vector<Lane>& lanes;
      std::vector<size_t>& depth_lane;
      const std::string& group;
      std::pair<uint64_t, uint64_t> interval(uint32_t index) const {
        return {trace.api_calls[index].start, trace.api_calls[index].end};
      }
      void add(size_t depth, uint32_t index) {
        while (depth_lane.size() <= depth) {
          depth_lane.push_back(lanes.size());
          lanes.push_back(
              Lane{group,
                   depth_lane.size() == 1 ? "CUDA calls" : absl::StrCat("CUDA calls, level ", depth_lane.size()),
                   "api",
                   {}});
        }
        const core::ApiCallRow& call = trace.api_calls[index];
        lanes[depth_lane[depth]].items.push_back(SliceInput{call.start, call.end, names.Intern(timeline.ApiName(call)),
                                                            ApiCategoryOf(timeline.Traits(call).category)});
      }
    } api{trace, timeline, names, lanes, depth_lane, group};
    ByDepth(t.api_calls, kMaxDepth, api);
    std::vector<size_t> nvtx_lane;
    struct NvtxLevels {
      const core::Trace& trace;
      Names& names;
      std::vector<Lane>& lanes;
      std::vector<size_t>& depth_lane;
      const std::string& group;
      std::pair<uint64_t, uint64_t> interval(const analysis::NvtxRange& r) const { return {r.begin, r.end}; }
      void add(size_t depth, const analysis::NvtxRange& r) {
        while (depth_lane.size() <= depth) {
          depth_lane.push_back(lanes.size());
          lanes.push_back(Lane{
              group, depth_lane.size() == 1 ? "NVTX" : absl::StrCat("NVTX, level ", depth_lane.size()), "nvtx", {}});
        }
        const std::string& name = trace.dict.str(r.name);
        lanes[depth_lane[depth]].items.push_back(
            SliceInput{r.begin, r.end, names.Intern(name.empty() ? "(unnamed range)" : name), SliceCategory::kNvtx});
      }
    } nvtx{trace, names, lanes, nvtx_lane, group};
    ByDepth(t.ranges, kMaxDepth, nvtx);
  }

  const size_t share = lanes.empty() ? options.max_slices : std::max<size_t>(1, options.max_slices / lanes.size());
  const size_t buckets = std::clamp(share / 2, options.min_buckets_per_lane, options.max_buckets_per_lane);
  const uint64_t bucket_ns = std::max<uint64_t>(1, (span + buckets - 1) / buckets);
  uint64_t recorded = 0, drawn = 0, merged_lanes = 0;
  w.Key("timeline").BeginObject().Field("span_ns", span).Field("bucket_ns", bucket_ns).Key("lanes").BeginArray();
  for (Lane& lane : lanes) {
    // Ops come in start order per device; calls and ranges per thread: sorting is a no-op in practice.
    std::stable_sort(lane.items.begin(), lane.items.end(),
                     [](const SliceInput& a, const SliceInput& b) { return a.start < b.start; });
    std::vector<Slice> slices;
    const bool merge = lane.items.size() > share;
    if (merge) {
      slices = DownsampleLane(lane.items, origin, bucket_ns);
      ++merged_lanes;
    } else {
      for (const SliceInput& item : lane.items) {
        const uint64_t start = std::max(item.start, origin);
        const uint64_t length = item.end > start ? item.end - start : 0;
        slices.push_back(Slice{start - origin, length, item.name, item.category, 1, length});
      }
    }
    recorded += lane.items.size();
    drawn += slices.size();
    w.BeginObject().Field("group", lane.group).Field("label", lane.label).Field("kind", lane.kind);
    w.Field("recorded", static_cast<uint64_t>(lane.items.size())).Field("merged", merge);
    // Flat: start, duration, name, category, count, busy_ns per slice.
    w.Key("slices").BeginArray();
    for (const Slice& sl : slices) {
      w.Uint(sl.start).Uint(sl.duration).Uint(sl.name).Uint(static_cast<uint64_t>(sl.category)).Uint(sl.count);
      w.Uint(sl.busy_ns);
    }
    w.EndArray().EndObject();
  }
  w.EndArray().Field("recorded_slices", recorded).Field("drawn_slices", drawn).Field("merged_lanes", merged_lanes);
  w.Key("names").BeginArray();
  for (const std::string& n : names.all()) w.String(n);
  w.EndArray().EndObject();

  // ---- GPU utilization: busy share of each of `utilization_buckets` equal stretches of the span.
  const size_t ubuckets = std::max<size_t>(1, options.utilization_buckets);
  const double width = span > 0 ? static_cast<double>(span) / static_cast<double>(ubuckets) : 1;
  w.Key("utilization").BeginObject().Field("bucket_ns", width).Key("devices").BeginArray();
  for (const analysis::DeviceTimeline& d : timeline.devices()) {
    w.BeginObject().Field("device", static_cast<uint64_t>(d.device)).Key("busy").BeginArray();
    for (size_t b = 0; b < ubuckets && span > 0; ++b) {
      const uint64_t b0 = origin + static_cast<uint64_t>(width * static_cast<double>(b));
      const uint64_t b1 =
          b + 1 == ubuckets ? origin + span : origin + static_cast<uint64_t>(width * static_cast<double>(b + 1));
      const uint64_t covered = b1 > b0 ? analysis::CoveredLength(d.busy, {b0, b1}) : 0;
      // Three decimals: a 1000-point series stays small and 0.1% is below what the chart shows.
      w.Number(b1 > b0 ? static_cast<double>(static_cast<uint64_t>(
                             1000.0 * static_cast<double>(covered) / static_cast<double>(b1 - b0) + 0.5)) /
                             1000.0
                       : 0.0);
    }
    w.EndArray().EndObject();
  }
  w.EndArray().EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace cuscope::report
