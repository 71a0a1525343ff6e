// The data `cuscope report` embeds in its HTML page, as one JSON document: the analysis (summary,
// findings, tables, kernel verdicts), a downsampled timeline of GPU streams and host threads, GPU
// utilization over time and the roofline points of the profiled kernels. html_report.h wraps it
// in the page; this file decides what goes in and how a big trace is made small.
//
// Downsampling, per timeline lane (a GPU stream, or one nesting level of a host thread's CUDA
// calls or NVTX ranges): the trace's span is cut into equal buckets (as many as the slice budget
// allows, at most `max_buckets_per_lane`); a slice at least one bucket long is kept as recorded,
// and consecutive shorter ones starting in the same bucket are merged into one slice that keeps
// their count, their busy time and the name with the most time. The page says how many slices
// were merged. Times in the document are nanoseconds from the start of the trace's span.
#ifndef CUSCOPE_LIB_REPORT_REPORT_DATA_H_
#define CUSCOPE_LIB_REPORT_REPORT_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/analysis/analyzer.h"
#include "lib/core/trace.h"

namespace cuscope::report {

// What a slice is, for its colour in the page (report_page's CATEGORY table uses the same order).
enum class SliceCategory : uint8_t {
  kKernel = 0,
  kCopyHtoD = 1,
  kCopyDtoH = 2,
  kCopyOther = 3,
  kMemset = 4,
  kApiSync = 5,
  kApiCopy = 6,
  kApiAlloc = 7,
  kApiSetup = 8,
  kApiLaunch = 9,
  kApiOther = 10,
  kNvtx = 11,
};

struct SliceInput {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t name = 0;  // index into the document's name table
  SliceCategory category = SliceCategory::kKernel;
};

struct Slice {
  uint64_t start = 0;  // from the origin
  uint64_t duration = 0;
  uint32_t name = 0;  // the recorded slice's, or the merged slices' name with the most time
  SliceCategory category = SliceCategory::kKernel;
  uint32_t count = 1;    // recorded slices it stands for
  uint64_t busy_ns = 0;  // their summed duration
};

// Downsamples one lane. `items` must be in start order, each with start >= origin; `bucket_ns` > 0.
std::vector<Slice> DownsampleLane(const std::vector<SliceInput>& items, uint64_t origin, uint64_t bucket_ns);

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
//   names [..]}, utilization {bucket_ns, devices [{device, busy [share per bucket]}]}.
std::string BuildReportData(const core::Trace& trace, const analysis::Analysis& analysis, const std::string& trace_path,
                            const ReportDataOptions& options = ReportDataOptions());

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_REPORT_DATA_H_
