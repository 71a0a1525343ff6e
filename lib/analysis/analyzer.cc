#include "lib/analysis/analyzer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "lib/analysis/monitor_summary.h"
#include "lib/analysis/nccl_summary.h"
#include "lib/analysis/requests.h"
#include "lib/analysis/rules/registry.h"

namespace cuscope::analysis {
namespace {

v1::TraceSummary Summarize(const core::Trace& trace, const Timeline& timeline) {
  v1::TraceSummary s;
  s.set_records(trace.record_count());
  s.set_kernels(timeline.kernel_count());
  s.set_replayed_kernels(timeline.replayed_kernel_count());
  s.set_memcpys(trace.memcpys.size());
  s.set_memsets(trace.memsets.size());
  s.set_api_calls(trace.api_calls.size());
  s.set_span_ns(timeline.span().length());
  const uint64_t session_start = timeline.trace().header.session().start_time_ns();
  s.set_session_start_ns(session_start != 0 ? session_start : timeline.span().begin);
  for (const DeviceTimeline& d : timeline.devices()) {
    v1::DeviceSummary* ds = s.add_devices();
    ds->set_device(d.device);
    ds->set_active_ns(d.active.length());
    ds->set_busy_ns(d.busy_ns());
    // Metric collection (kernel replay) is neither busy nor idle for the program.
    const uint64_t counted = d.counted_active_ns();
    // As gpu.idle judges it: replayed launches' measured time counts busy.
    ds->set_busy_share(counted ? static_cast<double>(d.busy_with_replays_ns()) / static_cast<double>(counted) : 0);
    ds->set_metrics_collection_ns(d.metrics_idle_ns());
    ds->set_replayed_busy_ns(d.busy_with_replays_ns() - d.busy_ns());
    ds->set_counted_active_ns(counted);
    ds->set_kernels(d.kernel_count);
    ds->set_kernel_time_ns(d.kernel_time_ns);
  }
  s.set_truncated(trace.truncated());
  s.set_tail_bytes_dropped(trace.tail_bytes_dropped);
  if (trace.stats) s.set_records_dropped(trace.stats->records_dropped_by_cupti());
  return s;
}

std::vector<std::string> RunWarningRules(const Timeline& timeline) {
  std::vector<std::string> warnings;
  for (WarningRule rule : WarningRules()) {
    for (std::string& w : rule(timeline)) warnings.push_back(std::move(w));
  }
  return warnings;
}

// The supporting tables of the report; the memory and counter tables only when there is something
// to show.
std::vector<Table> SupportingTables(const core::Trace& trace, const Timeline& timeline, const RequestReport& requests) {
  std::vector<Table> tables;
  // A monitor run without a trace window has no records for the record tables to show.
  if (trace.record_count() == 0 && !trace.monitor_intervals.empty()) {
    tables.push_back(MonitorSummaryTable(timeline));
    tables.push_back(MonitorKernelTable(timeline));
    if (Table per_route = MonitorRequestTable(timeline); !per_route.rows.empty()) tables.push_back(std::move(per_route));
    return tables;
  }
  tables.push_back(KernelSummary(timeline));
  // Launches with call stacks (--stacks): where each kernel was launched from.
  if (!trace.launch_stacks.empty() || !trace.graph_nodes.empty()) tables.push_back(KernelStackSummary(timeline));
  // A program that marks its steps (or requests) with NVTX ranges gets their GPU time per instance.
  if (!trace.nvtx.empty()) {
    Table steps = NvtxGpuProjectionSummary(timeline);
    const bool repeated = std::any_of(steps.rows.begin(), steps.rows.end(), [](const auto& row) { return row[3] != "1"; });
    if (repeated) tables.push_back(std::move(steps));
  }
  if (!trace.memcpys.empty() || !trace.memsets.empty()) tables.push_back(MemoryTimeSummary(timeline));
  // A rank of a distributed job: NCCL's kernels and calls per collective.
  if (Table nccl = NcclSummary(timeline); !nccl.rows.empty()) tables.push_back(std::move(nccl));
  // A server with request scopes: its requests per route.
  if (!requests.requests.empty()) tables.push_back(RequestSummaryTable(timeline, requests));
  tables.push_back(ApiSummary(timeline));
  tables.push_back(KernelExecutionSummary(timeline));
  if (!trace.counter_samples.empty()) tables.push_back(GpuMetricsSummary(timeline));
  if (!trace.monitor_intervals.empty()) {
    tables.push_back(MonitorSummaryTable(timeline));
    tables.push_back(MonitorKernelTable(timeline));
  }
  return tables;
}

// Ranked: severity first, then the time a fix could recover.
void SortFindings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.recoverable_ns > b.recoverable_ns;
  });
}

}  // namespace

std::vector<Finding> RunRules(const Timeline& timeline, const Thresholds& thresholds) {
  std::vector<Finding> findings;
  for (FindingRule rule : FindingRules()) {
    for (Finding& f : rule(timeline, thresholds)) findings.push_back(std::move(f));
  }
  SortFindings(findings);
  return findings;
}

Analysis Analyze(const core::Trace& trace, const AnalyzeOptions& options) {
  return Analyze(Timeline::Build(trace), options);
}

Analysis Analyze(const Timeline& timeline, const AnalyzeOptions& options) {
  const core::Trace& trace = timeline.trace();
  Analysis out;
  out.summary = Summarize(trace, timeline);
  out.warnings = RunWarningRules(timeline);
  out.findings = RunRules(timeline, options.thresholds);
  // Requests: joined once, for their findings and their table.
  const RequestReport requests = BuildRequests(timeline);
  if (!requests.requests.empty()) {
    for (Finding& f : RequestFindings(timeline, requests, options.thresholds)) out.findings.push_back(std::move(f));
    SortFindings(out.findings);
  }
  out.kernel_verdicts = JudgeKernels(timeline, options.thresholds);
  out.kernel_internals = SummarizeVerdicts(out.kernel_verdicts, timeline);
  out.baseline = ComputeBaseline(timeline);
  out.gpu_counters = AnalyzeGpuCounters(timeline, out.baseline, options.thresholds);
  out.top_down = BuildTopDown(timeline, out.kernel_verdicts);
  if (options.include_tables) out.tables = SupportingTables(trace, timeline, requests);
  return out;
}

}  // namespace cuscope::analysis
