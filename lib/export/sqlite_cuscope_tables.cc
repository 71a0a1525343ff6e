// What nsys's tables have no room for, as cuscope's own: kernel metrics and counters, windows and
// the top-down, launch stacks, requests, monitor intervals, host records, findings, the session
// and the strings every table refers to.
#include "lib/export/sqlite_trace_tables.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/timeline.h"
#include "lib/analysis/top_down_report.h"
#include "lib/core/api_names.h"
#include "lib/core/kernel_names.h"
#include "lib/core/output_file.h"
#include "lib/core/version.h"
#include "lib/export/nvtx_range_pairing.h"
#include "lib/export/sqlite_database.h"
#include "lib/export/sqlite_schema.h"

namespace cuscope::exporter::sqlite_tables {

absl::Status TraceTables::WriteMetricsAndCounters() {
  auto metrics = Prepare("CUSCOPE_KERNEL_METRICS", 13);
  if (!metrics.ok()) return metrics.status();
  for (const core::MetricRow& m : trace_.metrics) {
    const std::string mode = ShortName(v1::ReplayMode_Name(m.replay_mode), "REPLAY_MODE_");
    for (const auto& [metric, value] : m.values) {
      Insert(**metrics, {U64(m.correlation_id), I64(m.device), I64(Str(dict_.str(m.kernel_name))), I64(m.grid[0]),
                         I64(m.grid[1]), I64(m.grid[2]), I64(m.block[0]), I64(m.block[1]), I64(m.block[2]),
                         I64(m.pass_count), Text(mode), I64(Str(dict_.str(metric))), Real(value)});
    }
  }
  auto counters = Prepare("CUSCOPE_COUNTER_SAMPLES", 6);
  if (!counters.ok()) return counters.status();
  for (const core::CounterSample& c : trace_.counter_samples) {
    const std::string source = ShortName(v1::CounterSource_Name(c.source), "COUNTER_SOURCE_");
    Insert(**counters, {I64(c.device), Text(source), I64(Str(dict_.str(c.name))), Time(c.start), End(c.start, c.end),
                        Real(c.value)});
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteWindowsAndTopDown() {
  auto windows = Prepare("CUSCOPE_CAPTURE_WINDOWS", 5);
  if (!windows.ok()) return windows.status();
  // A window arrives whole, or as an opening half (no end) and a later closing half (no start) of
  // the same kind, paired innermost first: a row per window, its end NULL when it was still open
  // at the end of the trace, its start NULL when its opening half is not in the trace.
  struct Row {
    v1::WindowKind kind;
    uint64_t start, end;
    std::string reason, end_reason;
  };
  std::vector<Row> rows;
  absl::flat_hash_map<int, std::vector<const v1::CaptureWindow*>> open;
  for (const v1::CaptureWindow& w : trace_.windows) {
    if (w.start_ns() != 0 && w.end_ns() != 0) {
      rows.push_back({w.kind(), w.start_ns(), w.end_ns(), w.reason(), w.reason()});
    } else if (w.start_ns() != 0) {
      open[w.kind()].push_back(&w);
    } else if (w.end_ns() != 0) {
      std::vector<const v1::CaptureWindow*>& halves = open[w.kind()];
      const v1::CaptureWindow* opening = halves.empty() ? nullptr : halves.back();
      if (!halves.empty()) halves.pop_back();
      rows.push_back({w.kind(), opening != nullptr ? opening->start_ns() : 0, w.end_ns(),
                      opening != nullptr ? opening->reason() : "", w.reason()});
    }
  }
  for (const auto& [kind, halves] : open) {
    for (const v1::CaptureWindow* w : halves) rows.push_back({w->kind(), w->start_ns(), 0, w->reason(), ""});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.start < b.start; });
  for (const Row& w : rows) {
    const std::string kind = ShortName(v1::WindowKind_Name(w.kind), "WINDOW_KIND_");
    Insert(**windows, {Text(kind), w.start != 0 ? Time(w.start) : kNull, w.end != 0 ? Time(w.end) : kNull,
                       Text(w.reason), w.end != 0 ? Text(w.end_reason) : kNull});
  }
  // The choices as analyze shows them: the hot kernels' launches and time measured inside the
  // timeline window (analysis/top_down_report.h), not the collector's running count.
  auto top_down = Prepare("CUSCOPE_TOP_DOWN", 13);
  if (!top_down.ok()) return top_down.status();
  const analysis::TopDownReport report = analysis::BuildTopDown(timeline_, {});
  for (const analysis::TopDownChoice& choice : report.choices) {
    int64_t rank = 0;
    for (const analysis::HotKernelEntry& k : choice.kernels) {
      Insert(**top_down, {Time(choice.time_ns), I64(rank++), I64(Str(k.name)), I64(k.device), I64(k.grid[0]),
                          I64(k.grid[1]), I64(k.grid[2]), I64(k.block[0]), I64(k.block[1]), I64(k.block[2]),
                          U64(k.window_ns), U64(k.launches), U64(choice.window_kernel_ns)});
    }
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteStacks() {
  auto launches = Prepare("CUSCOPE_LAUNCH_STACKS", 2);
  if (!launches.ok()) return launches.status();
  absl::flat_hash_set<uint32_t> stacks;
  for (const core::LaunchStackRow& l : trace_.launch_stacks) {
    stacks.insert(l.stack);
    Insert(**launches, {U64(l.correlation_id), I64(l.stack)});
  }
  auto nodes = Prepare("CUSCOPE_GRAPH_NODES", 5);
  if (!nodes.ok()) return nodes.status();
  for (const core::GraphNodeRow& g : trace_.graph_nodes) {
    if (g.stack != 0) stacks.insert(g.stack);
    Insert(**nodes, {U64(g.node_id), OrNull(g.stack), OrNull(g.original_node_id),
                     g.created_ns != 0 ? Time(g.created_ns) : kNull, GlobalTid(g.thread)});
  }
  std::vector<uint32_t> ordered(stacks.begin(), stacks.end());
  std::sort(ordered.begin(), ordered.end());
  auto frames = Prepare("CUSCOPE_STACK_FRAMES", 8);
  if (!frames.ok()) return frames.status();
  for (uint32_t stack : ordered) {
    if (!dict_.has_stack(stack)) continue;
    int64_t depth = 0;
    for (uint32_t id : dict_.stack(stack).frames()) {
      if (!dict_.has_frame(id)) continue;
      const v1::StackFrame& f = dict_.frame(id);
      Insert(**frames,
             {I64(stack), I64(depth++), StrOrNull(f.module()), U64(f.module_offset()), StrOrNull(f.function()),
              U64(f.function_offset()), StrOrNull(f.source_file()), f.line() != 0 ? I64(f.line()) : kNull});
    }
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteRequests() {
  auto scopes = Prepare("CUSCOPE_REQUEST_SCOPES", 7);
  if (!scopes.ok()) return scopes.status();
  auto members = Prepare("CUSCOPE_BATCH_REQUESTS", 2);
  if (!members.ok()) return members.status();
  int64_t id = 0;
  for (const core::RequestScopeRow& r : trace_.request_scopes) {
    ++id;
    Insert(**scopes, {I64(id), Time(r.start), End(r.start, r.end), GlobalTid(r.thread), U64(r.id), I64(r.batch),
                      StrOrNull(r.route)});
    for (uint64_t request : r.batch_requests) {
      Insert(**members, {I64(id), U64(request)});
    }
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteMonitor() {
  auto intervals = Prepare("CUSCOPE_MONITOR_INTERVALS", 12);
  auto devices = Prepare("CUSCOPE_MONITOR_DEVICES", 17);
  auto kernels = Prepare("CUSCOPE_MONITOR_KERNELS", 12);
  auto requests = Prepare("CUSCOPE_MONITOR_REQUESTS", 8);
  for (auto* p : {&intervals, &devices, &kernels, &requests}) {
    if (!p->ok()) return p->status();
  }
  int64_t id = 0;
  for (const v1::MonitorInterval& m : trace_.monitor_intervals) {
    ++id;
    Insert(**intervals,
           {I64(id), Time(m.start_ns()), End(m.start_ns(), m.end_ns()), U64(m.launch_calls()), U64(m.sync_calls()),
            U64(m.sync_wait_ns()), U64(m.records_dropped_by_cupti()), U64(m.late_records()),
            I64(m.estimated() ? 1 : 0), m.estimated() ? U64(m.observed_ns()) : kNull,
            m.estimated() ? U64(m.sample_windows()) : kNull,
            m.estimated() && m.count_bound() >= 0 ? Real(m.count_bound()) : kNull});
    for (const v1::MonitorDevice& d : m.devices()) {
      std::array<Cell, core::kHostCauseCount> idle;
      idle.fill(kNull);
      for (int c = 0; c < core::kHostCauseCount && c < d.idle_by_cause_ns_size(); ++c) {
        idle[c] = U64(d.idle_by_cause_ns(c));
      }
      Insert(**devices, {I64(id), I64(d.device()), U64(d.busy_ns()), U64(d.idle_ns()), idle[0], idle[1], idle[2],
                         idle[3], idle[4], idle[5], U64(d.kernels()), U64(d.kernel_gpu_ns()), U64(d.memsets()),
                         U64(d.memset_bytes()), U64(d.memset_ns()), m.estimated() ? U64(d.observed_ns()) : kNull,
                         m.estimated() && d.busy_share_bound() >= 0 ? Real(d.busy_share_bound()) : kNull});
      int64_t rank = 0;
      for (const v1::MonitorKernel& k : d.top_kernels()) {
        Insert(**kernels, {I64(id), I64(d.device()), I64(rank++), StrOrNull(k.name()), I64(k.grid_x()),
                           I64(k.grid_y()), I64(k.grid_z()), I64(k.block_x()), I64(k.block_y()), I64(k.block_z()),
                           U64(k.launches()), U64(k.gpu_ns())});
      }
    }
    for (const v1::MonitorRouteRequests& r : m.requests()) {
      Insert(**requests,
             {I64(id), StrOrNull(r.route()), U64(r.requests()), Real(r.span().sum_seconds()),
              Real(r.gpu().sum_seconds()), Real(r.queue().sum_seconds()), Real(r.span_p50()), Real(r.span_p99())});
    }
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteHostRecords() {
  auto memory = Prepare("CUSCOPE_MEMORY_OPERATIONS", 10);
  if (!memory.ok()) return memory.status();
  for (const core::MemoryOpRecord& m : trace_.memory_ops) {
    const std::string type = ShortName(v1::MemoryOperationType_Name(m.type), "MEMORY_OPERATION_");
    Insert(**memory, {Time(m.time), Text(type), I64(NsysMemoryKind(m.memory_kind)), U64(m.bytes), U64(m.address),
                      I64(m.device), I64(m.context), I64(m.stream), U64(m.correlation_id), I64(m.async)});
  }
  auto overheads = Prepare("CUSCOPE_OVERHEADS", 5);
  if (!overheads.ok()) return overheads.status();
  for (const core::OverheadRow& o : trace_.overheads) {
    Insert(**overheads,
           {Time(o.start), End(o.start, o.end), StrOrNull(o.kind), GlobalTid(o.thread), U64(o.correlation_id)});
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteFindings(const std::vector<analysis::Finding>& findings) {
  auto head = Prepare("CUSCOPE_FINDINGS", 7);
  auto numbers = Prepare("CUSCOPE_FINDING_NUMBERS", 4);
  auto spans = Prepare("CUSCOPE_FINDING_SPANS", 4);
  auto offenders = Prepare("CUSCOPE_FINDING_OFFENDERS", 5);
  for (auto* p : {&head, &numbers, &spans, &offenders}) {
    if (!p->ok()) return p->status();
  }
  int64_t id = 0;
  for (const analysis::Finding& f : findings) {
    ++id;
    ++summary_.findings;
    Insert(**head, {I64(id), I64(id), Text(f.rule_id), Text(analysis::SeverityName(f.severity)), Text(f.headline),
                    Text(f.recommendation), U64(f.recoverable_ns)});
    for (const analysis::Number& n : f.numbers) {
      Insert(**numbers, {I64(id), Text(n.key), Real(n.value), Text(n.unit)});
    }
    for (const analysis::Span& s : f.spans) {
      Insert(**spans, {I64(id), Time(s.begin), End(s.begin, s.end), Text(s.label)});
    }
    for (const analysis::Offender& o : f.offenders) {
      Insert(**offenders, {I64(id), Text(o.kind), Text(o.name), U64(o.count), U64(o.time_ns)});
    }
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteSession(const std::string& source_name) {
  const v1::Session& s = trace_.header.session();
  auto meta = Prepare("META_DATA_EXPORT", 2);
  if (!meta.ok()) return meta.status();
  std::vector<std::pair<std::string, std::string>> rows = {
      {"EXPORT_SCHEMA_VERSION", std::string(kNsysSchemaVersion)},
      {"EXPORT_PRODUCT_VERSION", absl::StrCat("cuscope ", core::kVersion)},
      {"CUSCOPE_SOURCE_TRACE", source_name},
      {"CUSCOPE_SESSION_START_CUPTI_NS", absl::StrCat(origin_)},
      {"CUSCOPE_SESSION_ENTRY", s.entry()},
      {"CUSCOPE_PID", absl::StrCat(pid_)},
      {"CUSCOPE_HOST", s.host()},
      {"CUSCOPE_COMMAND_LINE", absl::StrJoin(s.command_line(), " ")},
      {"CUSCOPE_RANK", absl::StrCat(s.rank())},
      {"CUSCOPE_WORLD_SIZE", absl::StrCat(s.world_size())},
      {"CUSCOPE_CHUNKS", absl::StrCat(trace_.chunks)},
      {"CUSCOPE_TRUNCATED_BYTES", absl::StrCat(trace_.tail_bytes_dropped)},
  };
  if (trace_.corruption.has_value())
    rows.emplace_back("CUSCOPE_CORRUPTION", std::string(trace_.corruption->message()));
  if (trace_.stats.has_value()) {
    rows.emplace_back("CUSCOPE_RECORDS_WRITTEN", absl::StrCat(trace_.stats->records_written()));
    rows.emplace_back("CUSCOPE_RECORDS_DROPPED_BY_CUPTI", absl::StrCat(trace_.stats->records_dropped_by_cupti()));
  }
  for (const auto& [name, value] : rows) {
    Insert(**meta, {Text(name), Text(value)});
  }
  auto start = Prepare("TARGET_INFO_SESSION_START_TIME", 3);
  if (!start.ok()) return start.status();
  if (s.clock_ref_realtime_ns() != 0 && s.clock_ref_cupti_ns() != 0) {
    const int64_t utc =
        static_cast<int64_t>(s.clock_ref_realtime_ns()) - static_cast<int64_t>(s.clock_ref_cupti_ns() - origin_);
    const absl::Time when = absl::FromUnixNanos(utc);
    const std::string utc_text = absl::FormatTime("%Y-%m-%dT%H:%M:%E9SZ", when, absl::UTCTimeZone());
    const std::string local_text = absl::FormatTime("%Y-%m-%dT%H:%M:%E9S%Ez", when, absl::LocalTimeZone());
    Insert(**start, {I64(utc), Text(utc_text), Text(local_text)});
  }
  auto details = Prepare("ANALYSIS_DETAILS", 4);
  if (!details.ok()) return details.status();
  const intervals::Interval span = timeline_.span();
  const int64_t begin = std::min<int64_t>(0, static_cast<int64_t>(span.begin - origin_));
  const int64_t stop = span.end > origin_ ? static_cast<int64_t>(span.end - origin_) : 0;
  Insert(**details, {I64(0), I64(stop - begin), I64(begin), I64(stop)});
  auto processes = Prepare("PROCESSES", 3);
  if (!processes.ok()) return processes.status();
  std::string name;
  if (s.command_line_size() > 0) {
    name = s.command_line(0);
    if (const size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  }
  Insert(**processes, {I64(GlobalPid(pid_)), I64(pid_), Text(name)});
  return absl::OkStatus();
}

absl::Status TraceTables::WriteStrings() {
  auto strings = Prepare("StringIds", 2);
  if (!strings.ok()) return strings.status();
  int64_t id = 0;
  for (const std::string* s : strings_) {
    Insert(**strings, {I64(++id), Text(*s)});
  }
  summary_.strings = strings_.size();
  return absl::OkStatus();
}

}  // namespace cuscope::exporter::sqlite_tables
