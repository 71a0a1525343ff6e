#include "lib/export/exporter.h"

#include <sys/stat.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/core/output_file.h"
#include "lib/core/trace_reader.h"
#include "lib/export/chrome_json_writer.h"
#include "lib/export/export_pass.h"
#include "lib/export/findings_pass.h"
#include "lib/export/perfetto_writer.h"
#include "lib/export/scan.h"

namespace cuscope::exporter {

std::optional<ExportFormat> ParseExportFormat(std::string_view name) {
  if (name == "perfetto") return ExportFormat::kPerfetto;
  if (name == "chrome-json") return ExportFormat::kChromeJson;
  return std::nullopt;
}

std::string_view ExportFormatName(ExportFormat format) {
  return format == ExportFormat::kPerfetto ? "perfetto" : "chrome-json";
}

absl::StatusOr<ExportSummary> ExportTrace(const std::string& trace_path, const ExportOptions& options,
                                          EventSink* sink) {
  std::vector<analysis::Finding> findings;
  // The scan opens the file first: a file that is not a trace fails here, before the analysis.
  absl::StatusOr<std::unique_ptr<core::TraceReader>> scan_reader = core::TraceReader::Open(trace_path);
  if (!scan_reader.ok()) return scan_reader.status();
  if (options.findings) {
    absl::StatusOr<std::vector<analysis::Finding>> found = RunFindingsPass(trace_path);
    if (!found.ok()) return found.status();
    findings = *std::move(found);
  }
  ScanResult scan = Scan(**scan_reader, options.add_source_lines);
  scan_reader->reset();
  if (scan.stuck_vote.HasCandidate()) {
    absl::StatusOr<std::unique_ptr<core::TraceReader>> again = core::TraceReader::Open(trace_path);
    if (!again.ok()) return again.status();
    ConfirmStuckCorrelation(**again, &scan);
  }

  ExportSummary summary;
  summary.tail_bytes_dropped = scan.tail_bytes_dropped;
  if (scan.corruption) {
    summary.warnings.push_back(
        absl::StrCat(scan.corruption->message(), "; exported the ", scan.chunks, " chunk(s) before it"));
  }
  if (scan.tail_bytes_dropped > 0) {
    summary.warnings.push_back(absl::StrCat("the trace ends in an incomplete block (", scan.tail_bytes_dropped,
                                            " bytes at the end dropped); exported the ", scan.chunks,
                                            " complete chunk(s)"));
  }
  absl::StatusOr<Utilization> utilization =
      Utilization::Create(scan.empty() ? 0 : scan.first_ns, scan.empty() ? 0 : scan.last_ns, options.bucket_ns);
  if (!utilization.ok()) return utilization.status();
  summary.bucket_ns = utilization->bucket_ns();

  absl::StatusOr<std::unique_ptr<core::TraceReader>> reader = core::TraceReader::Open(trace_path);
  if (!reader.ok()) return reader.status();
  ExportPass pass(scan, findings, sink, *std::move(utilization), &summary);
  if (auto st = pass.Run(**reader, trace_path); !st.ok()) return st;
  return summary;
}

absl::StatusOr<ExportSummary> ExportToFile(const std::string& trace_path, const std::string& output_path,
                                           const ExportOptions& options) {
  // Open the input first: a missing or foreign input is reported before an output is created.
  {
    absl::StatusOr<std::unique_ptr<core::TraceReader>> probe = core::TraceReader::Open(trace_path);
    if (!probe.ok()) return probe.status();
  }
  struct stat in {}, out {};
  if (::stat(trace_path.c_str(), &in) != 0) return absl::NotFoundError(absl::StrCat("cannot read ", trace_path));
  if (::stat(output_path.c_str(), &out) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
    return absl::InvalidArgumentError(absl::StrCat("the output ", output_path, " is the input trace"));
  }
  absl::StatusOr<std::unique_ptr<core::OutputFile>> file = core::OutputFile::Create(output_path, options.overwrite);
  if (!file.ok()) return file.status();
  const uint64_t trace_bytes = static_cast<uint64_t>(in.st_size);
  (*file)->SetByteLimit(core::TraceOutputBound(trace_bytes), absl::StrCat("the export to ", output_path),
                        core::TraceOutputBoundReason(trace_bytes));
  std::unique_ptr<EventSink> writer;
  if (options.format == ExportFormat::kPerfetto) {
    writer = std::make_unique<PerfettoWriter>(file->get());
  } else {
    writer = std::make_unique<ChromeJsonWriter>(file->get());
  }
  absl::StatusOr<ExportSummary> summary = ExportTrace(trace_path, options, writer.get());
  if (summary.ok()) {
    summary->bytes_written = (*file)->bytes();
    if (absl::Status st = (*file)->Close(); !st.ok()) summary = st;
  }
  if (!summary.ok()) (*file)->Discard();
  return summary;
}

}  // namespace cuscope::exporter
