#include "lib/analysis/analyzer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {

bool Analysis::healthy() const { return worst() < Severity::kWarning; }

Severity Analysis::worst() const {
  Severity worst_seen = Severity::kInfo;
  for (const Finding& f : findings) worst_seen = std::max(worst_seen, f.severity);
  return worst_seen;
}

std::vector<Finding> RunRules(const Timeline& timeline, const Thresholds& thresholds) {
  using Rule = std::vector<Finding> (*)(const Timeline&, const Thresholds&);
  static constexpr Rule kRules[] = {GpuIdleRule,  LaunchOverheadRule, SyncPointsRule,
                                    CopiesRule,   StreamsRule,        HotKernelsRule};
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
    ds->set_busy_share(d.active.length() ? static_cast<double>(d.busy_ns()) / static_cast<double>(d.active.length()) : 0);
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

  out.findings = RunRules(timeline, options.thresholds);
  if (options.include_tables) {
    out.tables.push_back(KernelSummary(timeline));
    if (!trace.memcpys.empty() || !trace.memsets.empty()) out.tables.push_back(MemoryTimeSummary(timeline));
    out.tables.push_back(ApiSummary(timeline));
    out.tables.push_back(KernelExecutionSummary(timeline));
  }
  return out;
}

namespace {

std::string FormatNumber(const Number& n) {
  if (n.unit == "ns") return FormatDuration(static_cast<uint64_t>(n.value));
  if (n.unit == "ratio") return FormatPercent(n.value);
  if (n.unit == "bytes") return FormatBytes(static_cast<uint64_t>(n.value));
  if (n.unit == "1/s") return absl::StrFormat("%.0f/s", n.value);
  return absl::StrFormat("%.0f", n.value);
}

}  // namespace

std::string RenderAnalysisText(const Analysis& analysis, const std::string& trace_path, size_t top_rows) {
  const v1::TraceSummary& s = analysis.summary;
  std::string out = absl::StrCat("cuscope analyze ", trace_path, ": ", s.records(), " records, ", s.kernels(),
                                 " kernels, ", s.memcpys(), " copies, ", s.api_calls(), " API calls over ",
                                 FormatDuration(s.span_ns()), "\n");
  for (const std::string& w : analysis.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  for (const v1::DeviceSummary& d : s.devices()) {
    absl::StrAppend(&out, "GPU ", d.device(), ": busy ", FormatPercent(d.busy_share()), " of its active ",
                    FormatDuration(d.active_ns()), " (", d.kernels(), " kernels, ", FormatDuration(d.kernel_time_ns()),
                    " kernel time)\n");
  }
  out += "\n";
  if (analysis.healthy()) {
    absl::StrAppend(&out, "Nothing wrong found: no rule raised a warning or an error.\n");
    if (s.devices_size() == 0) absl::StrAppend(&out, "(the trace holds no GPU work)\n");
  }
  if (!analysis.findings.empty()) {
    absl::StrAppend(&out, "Findings (most severe and most costly first):\n\n");
    int rank = 0;
    for (const Finding& f : analysis.findings) {
      absl::StrAppend(&out, ++rank, ". [", std::string(SeverityName(f.severity)), "] ", f.rule_id, ": ", f.headline, "\n");
      if (f.recoverable_ns > 0) absl::StrAppend(&out, "   could recover: up to ", FormatDuration(f.recoverable_ns), "\n");
      std::string numbers;
      for (const Number& n : f.numbers) {
        if (n.unit == "id") continue;
        absl::StrAppend(&numbers, numbers.empty() ? "" : ", ", n.key, "=", FormatNumber(n));
      }
      if (!numbers.empty()) absl::StrAppend(&out, "   numbers: ", numbers, "\n");
      for (const Offender& o : f.offenders) {
        absl::StrAppend(&out, "   ", o.kind, ": ", o.name, " (");
        if (o.count > 0) absl::StrAppend(&out, o.count, "x, ");
        absl::StrAppend(&out, FormatDuration(o.time_ns), ")\n");
      }
      for (const Span& sp : f.spans) {
        absl::StrAppend(&out, "   span: ", sp.label, " [", sp.begin, " .. ", sp.end, "] ns (",
                        FormatDuration(sp.end > sp.begin ? sp.end - sp.begin : 0), ")\n");
      }
      absl::StrAppend(&out, "   advice: ", f.recommendation, "\n\n");
    }
  }
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
  for (const Table& t : analysis.tables) {
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
