// The data `cuscope report` embeds in its HTML page, as one JSON document: the analysis (summary,
// findings, tables, kernel verdicts), a downsampled timeline of GPU streams and host threads, GPU
// utilization over time and the roofline points of the profiled kernels. html_report.h wraps it
// in the page; this file decides what goes in, timeline_lanes.h how a big trace is made small.
//
// One analysis, one timeline: the sections of the analysis are written from the Analysis that
// Analyze returned, as it is (the same structs report_proto.h turns into report.proto), and what
// only the events hold (the span's start, every lane's events, the devices' busy intervals, the
// kernels without metric rows, the kernel metrics table) from the timeline that analysis ran on.
// Nothing is analyzed or built twice.
//
// Downsampling: the trace's span is cut into equal buckets per lane, as many as the slice budget
// allows (at most `max_buckets_per_lane`); a lane with more slices than its share of the budget is
// merged (DownsampleLane), and the page says how many slices were merged. Times in the document are
// nanoseconds from the start of the trace's span.
#ifndef CUSCOPE_LIB_REPORT_REPORT_DATA_H_
#define CUSCOPE_LIB_REPORT_REPORT_DATA_H_

#include <cstddef>
#include <string>

#include "lib/analysis/analyzer.h"
#include "lib/core/trace.h"
#include "lib/report/timeline_lanes.h"

namespace cuscope::report {

struct ReportDataOptions {
  // Slices drawn in all lanes together, roughly: the bucket width is chosen from it.
  size_t max_slices = 60000;
  size_t max_buckets_per_lane = 4096;
  size_t min_buckets_per_lane = 256;
  size_t utilization_buckets = 1000;
  size_t max_table_rows = 200;
  size_t max_not_measured = 20;  // kernels listed as "not measured" under the roofline
};

// The JSON document, an object with:
//   format ("cuscope-report/1"), trace, session {host, pid, command, library_version, origin_ns},
//   devices [{id, name, compute_capability, sm_count, peak_* rates}],
//   summary (report.proto's TraceSummary), warnings [..], findings [{rule_id, severity, headline,
//   recoverable_ns, recommendation, numbers [{key, value, unit}], offenders [{kind, name, display?,
//   count, time_ns}], spans [{start, end, label}]}], kernel_verdicts [..],
//   roofline {points [{label, device, intensity, flop_per_second, precision, fp32/fp64/fp16_flop,
//   dram_bytes, roof_pct, tensor_pipe_pct, gpu_time_ns, kernel_time_share, bottleneck}],
//   not_measured [{label, why, count?, time_ns?}], not_measured_more},
//   tables [{name, title, columns [{name, type}], total_rows, rows [[cell, ..]]}],
//   timeline {span_ns, bucket_ns, lanes [{group, label, kind, recorded, merged, slices [start,
//   duration, name, category, count, busy_ns, ...]}], recorded_slices, drawn_slices, merged_lanes,
//   names [..]}, utilization {bucket_ns, devices [{device, busy [share per bucket]}]},
//   call_paths (null without --stacks) {name, time_ns, launches, children [..]}: GPU time by call path.
// `analysis` is Analyze's result over `timeline` (analyzer.h): the page shows what the analysis
// found and draws the timeline it ran on.
std::string BuildReportData(const analysis::Timeline& timeline, const analysis::Analysis& analysis,
                            const std::string& trace_path, const ReportDataOptions& options = ReportDataOptions());

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_REPORT_DATA_H_
