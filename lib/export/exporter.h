// `cuscope export`: a trace as a timeline for trace viewers.
//
// The export makes up to three passes over the file, the last two streaming:
//   1. with findings on (the default), the analysis pass (findings_pass.h): it loads the trace
//      and runs the analyzer, holding what `cuscope analyze` holds, and keeps only the findings;
//   2. the scan (scan.h): one chunk at a time; keeps the time span, the tracks, about one bit per
//      correlation id and the capture windows;
//   3. the export: one chunk at a time; every record becomes events handed to the writer, which
//      writes them out at once. Between chunks it keeps per track the lane state
//      (lane_allocator.h), the NVTX ranges still open, the names already interned by the writer,
//      the utilization buckets (utilization.h) and the ids of the graph launches seen.
// So without findings the trace never has to fit in memory; with findings the peak is that of
// `cuscope analyze` on the same trace, before the export writes anything.
//
// What goes where:
//   * a group per GPU ("GPU 0: NVIDIA H200") with its utilization counter (percent busy per
//     bucket) and a track per stream: kernels (grid, block, registers, shared memory, correlation
//     id as arguments; launches replayed for metric collection named "… [metrics replay]" in
//     category replayed_kernel), copies and memsets (bytes, kinds, throughput);
//   * the host process with a track per thread: its CUDA runtime and driver calls; child tracks
//     for its NVTX ranges (marks as instants) and CUPTI's overhead records;
//   * flows from each API call to the GPU work it issued, by correlation id (from the runtime call
//     when a runtime and a driver call share the id; to the first node of a graph launch);
//   * "cuscope capture windows": when collection was on, METRICS windows (kernel replay) apart;
//   * "cuscope findings": a track per finding, its spans as slices named by their labels.
// Slices that would not nest on their track go to overflow tracks named "… (overlap N)".
// Not exported: synchronization records (the waits show as the calls that made them), memory
// allocation records, and metric values (`cuscope stats --report kern_metrics` has them).
#ifndef CUSCOPE_LIB_EXPORT_EXPORTER_H_
#define CUSCOPE_LIB_EXPORT_EXPORTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/core/dictionary.h"
#include "lib/export/event_sink.h"

namespace cuscope::exporter {

enum class ExportFormat { kPerfetto, kChromeJson };
// "perfetto" or "chrome-json".
std::optional<ExportFormat> ParseExportFormat(std::string_view name);
std::string_view ExportFormatName(ExportFormat format);

struct ExportOptions {
  ExportFormat format = ExportFormat::kPerfetto;
  // Run the analysis pass and draw the findings.
  bool findings = true;
  // Width of the utilization buckets; 0 picks one from the trace's span (utilization.h).
  uint64_t bucket_ns = 0;
  // Replace an existing output file.
  bool overwrite = false;
  // Given the whole file's dictionary before the launch sites are named: adds what the file does not
  // hold (the CLI's native source lines, lib/symbolize). None: the frames as recorded.
  std::function<void(core::Dictionary&)> add_source_lines;
};

struct ExportSummary {
  uint64_t chunks = 0;
  uint64_t kernels = 0;
  uint64_t api_calls = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t nvtx_ranges = 0;
  uint64_t nvtx_marks = 0;
  uint64_t overheads = 0;
  uint64_t flows = 0;  // API calls a flow starts from
  uint64_t findings = 0;        // findings drawn: those with spans, a track each
  uint64_t findings_total = 0;  // every finding of the analysis, as `cuscope analyze` lists them
  uint64_t finding_spans = 0;
  uint64_t windows = 0;
  uint64_t counter_samples = 0;
  uint64_t tracks = 0;
  uint64_t overlap_slices = 0;  // slices placed on an overflow track
  uint64_t dropped_slices = 0;  // slices that fit no lane of their track
  uint64_t bucket_ns = 0;
  uint64_t bytes_written = 0;
  uint64_t tail_bytes_dropped = 0;
  // Things the reader should know: a cut or damaged input, NVTX ranges never closed, ...
  std::vector<std::string> warnings;
};

// Exports the trace at `trace_path` into `sink` (options.format and overwrite are not used).
// Fails when the file is not a readable trace (InvalidArgument: not a trace; FailedPrecondition:
// a newer format version; NotFound: cannot open) or when the sink fails; a cut or damaged trace
// is exported as far as it goes, with a warning.
absl::StatusOr<ExportSummary> ExportTrace(const std::string& trace_path, const ExportOptions& options, EventSink* sink);

// Exports to the file `output_path` in options.format. The output is removed again when the export
// fails. Refuses an output that is the input file.
absl::StatusOr<ExportSummary> ExportToFile(const std::string& trace_path, const std::string& output_path,
                                           const ExportOptions& options);

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_EXPORTER_H_
