#include "lib/analysis/monitor_summary.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/core/record_codec/monitor_interval.h"

namespace cuscope::analysis {
namespace {

using KernelKey = std::tuple<std::string, std::array<uint32_t, 3>, std::array<uint32_t, 3>>;

std::string Percent(uint64_t part, uint64_t whole) {
  return absl::StrFormat("%.1f", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
}

std::string PerSecond(uint64_t count, uint64_t span_ns) {
  return absl::StrFormat("%.1f", span_ns > 0 ? static_cast<double>(count) * 1e9 / static_cast<double>(span_ns) : 0.0);
}

std::string Dim(const std::array<uint32_t, 3>& d) { return absl::StrCat(d[0], "x", d[1], "x", d[2]); }

}  // namespace

MonitorSummary SummarizeMonitor(const core::Trace& trace) {
  MonitorSummary out;
  std::map<uint32_t, MonitorDeviceSummary> devices;
  std::map<uint32_t, std::map<KernelKey, core::KernelFigures>> kernels;
  for (const v1::MonitorInterval& stored : trace.monitor_intervals) {
    const core::IntervalFigures f = core::DecodeMonitorInterval(stored, trace.dict);
    ++out.intervals;
    out.launch_calls += f.launch_calls;
    out.sync_calls += f.sync_calls;
    out.sync_wait_ns += f.sync_wait_ns;
    out.records_dropped_by_cupti += f.records_dropped_by_cupti;
    for (const core::DeviceFigures& d : f.devices) {
      MonitorDeviceSummary& s = devices[d.device];
      s.device = d.device;
      ++s.intervals;
      s.span_ns += d.busy_ns + d.idle_ns;  // the interval, less the program's start-up before the device's first operation
      s.busy_ns += d.busy_ns;
      s.idle_ns += d.idle_ns;
      for (int c = 0; c < core::kHostCauseCount; ++c) s.idle_by_cause_ns[c] += d.idle_by_cause_ns[c];
      s.kernels += d.kernels;
      s.kernel_gpu_ns += d.kernel_gpu_ns;
      for (const core::CopyFigures& c : d.copies) {
        s.copy_bytes += c.bytes;
        s.copy_ns += c.gpu_ns;
      }
      auto add = [&](const core::KernelFigures& k) {
        core::KernelFigures& sum = kernels[d.device][{k.name, k.grid, k.block}];
        sum.name = k.name;
        sum.grid = k.grid;
        sum.block = k.block;
        sum.launches += k.launches;
        sum.gpu_ns += k.gpu_ns;
      };
      for (const core::KernelFigures& k : d.top_kernels) add(k);
      if (d.other_kernels.launches > 0) add(core::KernelFigures{"", {}, {}, d.other_kernels.launches, d.other_kernels.gpu_ns});
    }
  }
  if (!trace.monitor_intervals.empty()) {
    out.span_ns = trace.monitor_intervals.back().end_ns() - trace.monitor_intervals.front().start_ns();
  }
  for (auto& [id, s] : devices) {
    for (auto& [key, k] : kernels[id]) s.kernels_by_time.push_back(std::move(k));
    std::sort(s.kernels_by_time.begin(), s.kernels_by_time.end(),
              [](const auto& a, const auto& b) { return a.gpu_ns > b.gpu_ns; });
    out.devices.push_back(std::move(s));
  }
  return out;
}

Table MonitorSummaryTable(const Timeline& timeline) {
  const MonitorSummary m = SummarizeMonitor(timeline.trace());
  Table t;
  t.name = "monitor_sum";
  t.title = "Monitor figures per device (idle split by what the host was doing)";
  t.columns = {{"Device", ColumnType::kInteger},     {"Intervals", ColumnType::kInteger},
               {"Span (s)", ColumnType::kDecimal},    {"Busy (%)", ColumnType::kPercent},
               {"Idle (%)", ColumnType::kPercent}};
  for (int c = 0; c < core::kHostCauseCount; ++c) {
    t.columns.push_back({absl::StrCat("Idle ", core::HostCauseName(static_cast<core::HostCause>(c)), " (%)"),
                         ColumnType::kPercent});
  }
  t.columns.push_back({"Kernels/s", ColumnType::kDecimal});
  t.columns.push_back({"Copy MB", ColumnType::kDecimal});
  for (const MonitorDeviceSummary& d : m.devices) {
    std::vector<std::string> row = {absl::StrCat(d.device), absl::StrCat(d.intervals),
                                    absl::StrFormat("%.3f", static_cast<double>(d.span_ns) / 1e9),
                                    Percent(d.busy_ns, d.span_ns), Percent(d.idle_ns, d.span_ns)};
    for (uint64_t ns : d.idle_by_cause_ns) row.push_back(Percent(ns, d.span_ns));
    row.push_back(PerSecond(d.kernels, d.span_ns));
    row.push_back(absl::StrFormat("%.3f", static_cast<double>(d.copy_bytes) / 1e6));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table MonitorKernelTable(const Timeline& timeline) {
  const MonitorSummary m = SummarizeMonitor(timeline.trace());
  Table t;
  t.name = "monitor_kern_sum";
  t.title = "Kernels by GPU time over the monitored run (\"(other kernels)\": past each interval's top N)";
  t.columns = {{"Device", ColumnType::kInteger},   {"Time (%)", ColumnType::kPercent}, {"Total Time (ns)", ColumnType::kInteger},
               {"Launches", ColumnType::kInteger}, {"GridXYZ", ColumnType::kText},     {"BlockXYZ", ColumnType::kText},
               {"Name", ColumnType::kText}};
  for (const MonitorDeviceSummary& d : m.devices) {
    for (const core::KernelFigures& k : d.kernels_by_time) {
      const bool other = k.name.empty();
      t.rows.push_back({absl::StrCat(d.device), Percent(k.gpu_ns, d.kernel_gpu_ns), absl::StrCat(k.gpu_ns),
                        absl::StrCat(k.launches), other ? "" : Dim(k.grid), other ? "" : Dim(k.block),
                        other ? "(other kernels)" : k.name});
    }
  }
  return t;
}

Table MonitorRequestTable(const Timeline& timeline) {
  struct Route {
    uint64_t requests = 0;
    core::RequestHistogram span, gpu, queue, idle;
    double worst_p99 = 0;
  };
  std::map<std::string, Route> routes;
  for (const v1::MonitorInterval& stored : timeline.trace().monitor_intervals) {
    const core::IntervalFigures f = core::DecodeMonitorInterval(stored, timeline.trace().dict);
    for (const core::RouteRequestFigures& r : f.requests) {
      Route& sum = routes[r.route];
      sum.requests += r.requests;
      sum.span.Merge(r.span);
      sum.gpu.Merge(r.gpu);
      sum.queue.Merge(r.queue);
      for (const core::RequestHistogram& h : r.idle) sum.idle.sum_seconds += h.sum_seconds;
      sum.worst_p99 = std::max(sum.worst_p99, r.span_p99);
    }
  }
  Table t;
  t.name = "monitor_req_sum";
  t.title = "Requests by route over the monitor intervals: means per request, and the worst interval's p99 span";
  t.columns = {{"Route", ColumnType::kText},          {"Requests", ColumnType::kInteger},
               {"Span Avg (ns)", ColumnType::kInteger}, {"GPU Avg (ns)", ColumnType::kInteger},
               {"Queue Avg (ns)", ColumnType::kInteger}, {"Idle Avg (ns)", ColumnType::kInteger},
               {"Worst Interval Span P99 (ns)", ColumnType::kInteger}};
  const auto mean_ns = [](double seconds, uint64_t n) {
    return absl::StrFormat("%.0f", n > 0 ? seconds * 1e9 / static_cast<double>(n) : 0.0);
  };
  for (const auto& [route, r] : routes) {
    t.rows.push_back({route.empty() ? std::string("(none)") : route, absl::StrCat(r.requests),
                      mean_ns(r.span.sum_seconds, r.requests), mean_ns(r.gpu.sum_seconds, r.requests),
                      mean_ns(r.queue.sum_seconds, r.requests), mean_ns(r.idle.sum_seconds, r.requests),
                      absl::StrFormat("%.0f", r.worst_p99 * 1e9)});
  }
  return t;
}

}  // namespace cuscope::analysis
