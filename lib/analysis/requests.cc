#include "lib/analysis/requests.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuscope::analysis {
namespace {

using requests::RequestFigures;

// The value at rank ceil(q * n) (nearest rank) of sorted values, as monitor mode's percentiles.
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::max(1.0, std::ceil(q * static_cast<double>(sorted.size()))));
  return sorted[std::min(rank, sorted.size()) - 1];
}

std::string Ns(double ns) { return absl::StrCat(ClampToU64(std::round(ns))); }

std::vector<const RequestFigures*> OfRoute(const RequestReport& report, uint32_t route) {
  std::vector<const RequestFigures*> out;
  for (const RequestFigures& r : report.requests) {
    if (r.route == route) out.push_back(&r);
  }
  return out;
}

// The routes in the report, with the requests that named none as route 0 when there are any.
std::vector<uint32_t> RoutesPresent(const RequestReport& report) {
  std::vector<uint32_t> routes;
  for (const RequestFigures& r : report.requests) {
    if (std::find(routes.begin(), routes.end(), r.route) == routes.end()) routes.push_back(r.route);
  }
  std::sort(routes.begin(), routes.end(), [&](uint32_t a, uint32_t b) { return report.RouteName(a) < report.RouteName(b); });
  return routes;
}

std::string RouteLabel(const RequestReport& report, uint32_t route) {
  const std::string_view name = report.RouteName(route);
  return name.empty() ? std::string("(none)") : std::string(name);
}

core::HostCause MainIdleCause(const RequestFigures& r) {
  int best = static_cast<int>(core::HostCause::kOutsideCuda);
  for (int c = 0; c < core::kHostCauseCount; ++c) {
    if (r.idle_by_cause_ns[c] > r.idle_by_cause_ns[best]) best = c;
  }
  return static_cast<core::HostCause>(best);
}

std::vector<double> Sorted(const std::vector<const RequestFigures*>& rs, double (*value)(const RequestFigures&)) {
  std::vector<double> v;
  v.reserve(rs.size());
  for (const RequestFigures* r : rs) v.push_back(value(*r));
  std::sort(v.begin(), v.end());
  return v;
}

double SpanOf(const RequestFigures& r) { return static_cast<double>(r.span_ns()); }
double GpuOf(const RequestFigures& r) { return r.gpu_ns; }
double QueueOf(const RequestFigures& r) { return static_cast<double>(r.queue_ns); }
double IdleOf(const RequestFigures& r) { return static_cast<double>(r.idle_ns); }

}  // namespace

std::string_view RequestReport::RouteName(uint32_t route) const {
  return route == 0 || route > routes.size() ? std::string_view() : std::string_view(routes[route - 1]);
}

RequestReport BuildRequests(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  RequestReport report;
  if (trace.request_scopes.empty()) return report;
  requests::RequestLedger::Options options;
  options.max_open_scopes = SIZE_MAX;  // a trace's scopes are all there at once
  options.max_history_operations = SIZE_MAX;
  options.history_ns = UINT64_MAX;
  options.keep_waits = true;
  options.owned = [&report](uint64_t correlation_id, uint32_t route, bool batch) {
    report.owner_route[correlation_id] = route;
    if (batch) report.owner_batch[correlation_id] = true;
  };
  requests::RequestLedger ledger(std::move(options));

  // Scopes and calls in time order (a scope before a call that starts with it), each call followed
  // by its GPU operations, then every operation no recorded call launched (busy time all the same).
  std::vector<uint32_t> scopes(trace.request_scopes.size());
  std::iota(scopes.begin(), scopes.end(), 0u);
  std::stable_sort(scopes.begin(), scopes.end(), [&](uint32_t a, uint32_t b) {
    return trace.request_scopes[a].start < trace.request_scopes[b].start;
  });
  absl::flat_hash_map<uint64_t, std::vector<OpRef>> ops_of;
  std::vector<OpRef> unclaimed;
  for (const DeviceTimeline& d : timeline.devices()) {
    for (OpRef op : d.ops) {
      const uint64_t correlation = op.kind() == OpKind::kKernel   ? trace.kernels[op.index()].correlation_id
                                   : op.kind() == OpKind::kMemcpy ? trace.memcpys[op.index()].correlation_id
                                                                  : trace.memsets[op.index()].correlation_id;
      if (correlation != 0 && timeline.ApiFor(correlation) != nullptr) {
        ops_of[correlation].push_back(op);
      } else {
        unclaimed.push_back(op);
      }
    }
  }
  const auto work = [&](OpRef op, uint64_t correlation) {
    const Interval x = timeline.OpInterval(op);
    switch (op.kind()) {
      case OpKind::kKernel:
        ledger.Work(correlation, timeline.KernelDevice(trace.kernels[op.index()]), timeline.OpStream(op), x.begin,
                    x.end, requests::WorkKind::kKernel);
        break;
      case OpKind::kMemcpy:
        ledger.Work(correlation, trace.memcpys[op.index()].device, timeline.OpStream(op), x.begin, x.end,
                    requests::WorkKind::kCopy);
        break;
      case OpKind::kMemset:
        ledger.Work(correlation, trace.memsets[op.index()].device, timeline.OpStream(op), x.begin, x.end,
                    requests::WorkKind::kMemset);
        break;
    }
  };
  std::vector<uint32_t> calls(trace.api_calls.size());
  std::iota(calls.begin(), calls.end(), 0u);
  std::stable_sort(calls.begin(), calls.end(),
                   [&](uint32_t a, uint32_t b) { return trace.api_calls[a].start < trace.api_calls[b].start; });
  size_t next_scope = 0;
  const auto scopes_until = [&](uint64_t time) {
    for (; next_scope < scopes.size() && trace.request_scopes[scopes[next_scope]].start <= time; ++next_scope) {
      const core::RequestScopeRow& s = trace.request_scopes[scopes[next_scope]];
      ledger.EndScope(s.thread, s.start, s.end, s.id, s.batch, trace.dict.str(s.route), s.batch_requests);
    }
  };
  for (uint32_t i : calls) {
    const core::ApiCallRow& call = trace.api_calls[i];
    scopes_until(call.start);
    ledger.Call(call.thread, call.start, call.end, call.correlation_id, timeline.Traits(call).category);
    if (auto it = ops_of.find(call.correlation_id); it != ops_of.end()) {
      for (OpRef op : it->second) work(op, call.correlation_id);
      ops_of.erase(it);
    }
  }
  scopes_until(UINT64_MAX);
  for (const auto& [correlation, ops] : ops_of) {
    for (OpRef op : ops) work(op, 0);
  }
  for (OpRef op : unclaimed) work(op, 0);
  report.requests = ledger.FinalizeAll();
  for (const DeviceTimeline& d : timeline.devices()) {
    for (OpRef op : d.ops) {
      if (op.kind() != OpKind::kKernel) continue;
      const core::KernelRow& k = trace.kernels[op.index()];
      const uint64_t ns = timeline.OpInterval(op).length();
      (report.owner_route.contains(k.correlation_id) ? report.kernel_ns_in_scopes : report.kernel_ns_outside) += ns;
    }
  }
  for (uint32_t r = 1; r <= ledger.route_count(); ++r) report.routes.emplace_back(ledger.RouteName(r));
  return report;
}

std::vector<Offender> WaitedBehind(const Timeline& timeline, const RequestReport& report,
                                   const requests::RequestFigures& request, size_t top) {
  if (request.waits.empty()) return {};
  const core::Trace& trace = timeline.trace();
  OffenderTally tally("kernel");
  for (const DeviceTimeline& d : timeline.devices()) {
    if (d.device != request.device) continue;
    for (OpRef op : d.ops) {
      const Interval x = timeline.OpInterval(op);
      if (x.begin >= request.waits.back().end) break;  // in start order
      if (op.kind() != OpKind::kKernel) continue;
      const uint64_t overlap = intervals::CoveredLength(request.waits, x);
      if (overlap == 0) continue;
      const core::KernelRow& k = trace.kernels[op.index()];
      std::string whose = "no request";
      if (auto it = report.owner_route.find(k.correlation_id); it != report.owner_route.end()) {
        whose = report.owner_batch.contains(k.correlation_id) ? std::string("batch") : RouteLabel(report, it->second);
      }
      tally.Add(absl::StrCat(std::string(timeline.KernelName(k)), " [", whose, "]"), overlap);
    }
  }
  return tally.Top(top);
}

Table RequestSummaryTable(const Timeline& /*timeline*/, const RequestReport& report) {
  Table t;
  t.name = "req_sum";
  t.title = "Requests by route: span (scope begin to end), GPU time, queueing on the GPU, GPU idle inside the span";
  for (const char* name : {"Route", "Requests", "Span Med (ns)", "Span P99 (ns)", "Span Max (ns)", "GPU Med (ns)",
                           "GPU P99 (ns)", "GPU Sum (ns)", "Queue Med (ns)", "Queue P99 (ns)", "Idle Med (ns)",
                           "Idle P99 (ns)"}) {
    t.columns.push_back({name, std::string_view(name) == "Route" ? ColumnType::kText : ColumnType::kInteger});
  }
  for (uint32_t route : RoutesPresent(report)) {
    const std::vector<const RequestFigures*> rs = OfRoute(report, route);
    const std::vector<double> span = Sorted(rs, SpanOf), gpu = Sorted(rs, GpuOf), queue = Sorted(rs, QueueOf),
                              idle = Sorted(rs, IdleOf);
    t.rows.push_back({RouteLabel(report, route), absl::StrCat(rs.size()), Ns(Percentile(span, 0.5)),
                      Ns(Percentile(span, 0.99)), Ns(span.back()), Ns(Percentile(gpu, 0.5)), Ns(Percentile(gpu, 0.99)),
                      Ns(std::accumulate(gpu.begin(), gpu.end(), 0.0)), Ns(Percentile(queue, 0.5)),
                      Ns(Percentile(queue, 0.99)), Ns(Percentile(idle, 0.5)), Ns(Percentile(idle, 0.99))});
  }
  if (!report.requests.empty()) {
    std::vector<std::string> outside(t.columns.size());
    outside[0] = "(outside requests)";
    outside[7] = absl::StrCat(report.kernel_ns_outside);
    t.rows.push_back(std::move(outside));
  }
  return t;
}

Table RequestRowsTable(const Timeline& timeline, const RequestReport& report) {
  Table t;
  t.name = "req_rows";
  t.title = "Every request: its span, GPU time (a batch's kernels shared equally), copies, queueing, idle by cause";
  t.columns = {{"Request", ColumnType::kInteger}, {"Route", ColumnType::kText},     {"Thread", ColumnType::kText},
               {"Start (ns)", ColumnType::kInteger}, {"Span (ns)", ColumnType::kInteger},
               {"GPU (ns)", ColumnType::kInteger}, {"Kernels", ColumnType::kInteger},
               {"Copies (ns)", ColumnType::kInteger}, {"Queue (ns)", ColumnType::kInteger},
               {"First Queue (ns)", ColumnType::kInteger},
               {"Idle (ns)", ColumnType::kInteger}};
  for (int c = 0; c < core::kHostCauseCount; ++c) {
    t.columns.push_back({absl::StrCat("Idle ", core::HostCauseName(static_cast<core::HostCause>(c)), " (ns)"),
                         ColumnType::kInteger});
  }
  t.columns.push_back({"Batches", ColumnType::kInteger});
  const uint64_t origin = timeline.span().begin;
  for (const RequestFigures& r : report.requests) {
    std::vector<std::string> row = {absl::StrCat(r.id),
                                    RouteLabel(report, r.route),
                                    timeline.ThreadLabel(static_cast<uint32_t>(r.thread)),
                                    absl::StrCat(r.start >= origin ? r.start - origin : 0),
                                    absl::StrCat(r.span_ns()),
                                    Ns(r.gpu_ns),
                                    absl::StrCat(r.kernels),
                                    Ns(r.copy_ns),
                                    absl::StrCat(r.queue_ns),
                                    absl::StrCat(r.first_queue_ns()),
                                    absl::StrCat(r.idle_ns)};
    for (int c = 0; c < core::kHostCauseCount; ++c) row.push_back(absl::StrCat(r.idle_by_cause_ns[c]));
    row.push_back(absl::StrCat(r.batches));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table RequestSummary(const Timeline& timeline) { return RequestSummaryTable(timeline, BuildRequests(timeline)); }
Table RequestRows(const Timeline& timeline) { return RequestRowsTable(timeline, BuildRequests(timeline)); }

namespace {

// What made `slow` slower than the route's median request: the part (queueing, its own GPU time,
// copies, GPU idle by its thread's cause) that grew the most, and by how much.
std::pair<std::string, double> SlowestPart(const RequestFigures& slow, const RequestFigures& median) {
  std::vector<std::pair<std::string, double>> parts = {
      {"queued on the GPU behind other work", QueueOf(slow) - QueueOf(median)},
      {"its own kernels", slow.gpu_ns - median.gpu_ns},
      {"its copies", slow.copy_ns - median.copy_ns}};
  for (int c = 0; c < core::kHostCauseCount; ++c) {
    const auto cause = static_cast<core::HostCause>(c);
    parts.emplace_back(absl::StrCat("the GPU idle while its thread was ",
                                    cause == core::HostCause::kOutsideCuda
                                        ? std::string("outside CUDA")
                                        : absl::StrCat("in ", core::HostCauseName(cause), " calls")),
                       static_cast<double>(slow.idle_by_cause_ns[c]) - static_cast<double>(median.idle_by_cause_ns[c]));
  }
  return *std::max_element(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
}

std::string Describe(const RequestFigures& r) {
  std::string out = absl::StrCat("request ", r.id, " took ", FormatDuration(r.span_ns()), ": ",
                                 FormatDuration(r.queue_ns), " queued on GPU ", r.device, ", ",
                                 FormatDuration(ClampToU64(r.gpu_ns)), " in its kernels");
  if (r.idle_ns > 0) {
    const core::HostCause cause = MainIdleCause(r);
    absl::StrAppend(&out, ", ", FormatDuration(r.idle_ns), " with the GPU idle (mostly ",
                    cause == core::HostCause::kOutsideCuda ? std::string("outside CUDA")
                                                           : absl::StrCat("in ", core::HostCauseName(cause), " calls"),
                    ")");
  }
  return out;
}

}  // namespace

std::vector<Finding> RequestFindings(const Timeline& timeline, const RequestReport& report,
                                     const Thresholds& thresholds) {
  std::vector<Finding> findings;
  const uint64_t span = timeline.span().length();
  for (uint32_t route : RoutesPresent(report)) {
    std::vector<const RequestFigures*> rs = OfRoute(report, route);
    if (static_cast<double>(rs.size()) < thresholds.request_min_count) continue;
    const std::string name = RouteLabel(report, route);
    std::sort(rs.begin(), rs.end(), [](const RequestFigures* a, const RequestFigures* b) {
      return a->span_ns() != b->span_ns() ? a->span_ns() < b->span_ns() : a->id < b->id;
    });
    const RequestFigures& median = *rs[(rs.size() - 1) / 2];
    const RequestFigures& p99 =
        *rs[std::min(rs.size(), static_cast<size_t>(std::ceil(0.99 * static_cast<double>(rs.size())))) - 1];
    const RequestFigures& worst = *rs.back();

    // requests.queued: the route's requests wait on the GPU behind other work.
    double queued = 0, spans = 0;
    std::vector<double> queues;
    for (const RequestFigures* r : rs) {
      queued += QueueOf(*r);
      spans += SpanOf(*r);
      queues.push_back(QueueOf(*r));
    }
    std::sort(queues.begin(), queues.end());
    const double queue_share = spans > 0 ? queued / spans : 0;
    const double median_queue = Percentile(queues, 0.5);
    if (queue_share >= thresholds.request_queue_min_share && median_queue >= thresholds.request_queue_min_us * 1e3) {
      Finding f;
      f.rule_id = "requests.queued";
      f.recoverable_ns = ClampToU64(queued);
      f.severity = SeverityFor(f.recoverable_ns, span, thresholds);
      if (f.severity == Severity::kInfo) f.severity = Severity::kWarning;
      // Whose work it waited behind: over the route's slowest requests (at most 50).
      OffenderTally behind("kernel");
      for (size_t i = rs.size() > 50 ? rs.size() - 50 : 0; i < rs.size(); ++i) {
        for (const Offender& o : WaitedBehind(timeline, report, *rs[i], 10)) behind.Add(o.name, o.time_ns, o.count);
      }
      f.offenders = behind.Top(5);
      f.headline = absl::StrCat("route ", name, ": requests wait ", FormatDuration(ClampToU64(median_queue)),
                                " (median) with their work queued on the GPU, ", FormatPercent(queue_share),
                                " of their span",
                                f.offenders.empty() ? std::string() : absl::StrCat(", behind ", f.offenders[0].name));
      f.Add("requests", static_cast<double>(rs.size()), "count");
      f.Add("queue_share", queue_share, "ratio");
      f.Add("median_queue_ns", median_queue, "ns");
      f.Add("p99_queue_ns", Percentile(queues, 0.99), "ns");
      f.recommendation =
          "The GPU ran other work when these requests launched: give the latency-sensitive route a stream of higher "
          "priority (cudaStreamCreateWithPriority), split long kernels of the other work into shorter ones, or keep "
          "the routes on different GPUs (or MIG instances / MPS limits).";
      findings.push_back(std::move(f));
    }

    // requests.slow: the tail against the median, and what grew.
    const double p99_ns = SpanOf(p99), median_ns = SpanOf(median);
    if (p99_ns >= thresholds.request_slow_ratio * median_ns &&
        p99_ns - median_ns >= thresholds.request_slow_min_excess_ms * 1e6) {
      const auto [part, excess] = SlowestPart(p99, median);
      Finding f;
      f.rule_id = "requests.slow";
      f.recoverable_ns = ClampToU64(p99_ns - median_ns);
      f.severity = Severity::kWarning;
      f.headline = absl::StrCat("route ", name, ": the p99 request takes ", FormatDuration(p99.span_ns()), ", ",
                                absl::StrFormat("%.1f", p99_ns / std::max(1.0, median_ns)),
                                "x the median (", FormatDuration(median.span_ns()), "); most of the difference is ",
                                part, " (+", FormatDuration(ClampToU64(excess)), ")");
      f.Add("requests", static_cast<double>(rs.size()), "count");
      f.Add("median_span_ns", median_ns, "ns");
      f.Add("p99_span_ns", p99_ns, "ns");
      f.Add("worst_span_ns", SpanOf(worst), "ns");
      f.Add("p99_request", static_cast<double>(p99.id), "id");
      f.Add("worst_request", static_cast<double>(worst.id), "id");
      f.Add("p99_queue_ns", QueueOf(p99), "ns");
      f.Add("p99_gpu_ns", p99.gpu_ns, "ns");
      f.Add("p99_idle_ns", IdleOf(p99), "ns");
      f.spans.push_back(Span{p99.start, p99.end, absl::StrCat("p99: ", Describe(p99))});
      f.spans.push_back(Span{worst.start, worst.end, absl::StrCat("worst: ", Describe(worst))});
      f.spans.push_back(Span{median.start, median.end, absl::StrCat("median: ", Describe(median))});
      f.offenders = WaitedBehind(timeline, report, worst, 5);
      f.recommendation =
          "Compare the slow requests with the median one (req_rows): queueing points at other work on the GPU, GPU "
          "time at larger inputs or slower kernels, idle time at the host (its cause names the calls).";
      findings.push_back(std::move(f));
    }
  }
  return findings;
}

}  // namespace cuscope::analysis
