#include "tests/fuzz/fuzz_checks.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/analysis/analyzer.h"
#include "lib/cli/trace_dump.h"
#include "lib/control/protocol.h"
#include "lib/core/output_file.h"
#include "lib/core/trace.h"
#include "lib/core/trace_reader.h"
#include "lib/ranks/rank_set.h"
#include "lib/ranks/rank_summary.h"
#include "lib/report/rank_set_page.h"
#include "lib/export/exporter.h"

namespace cuscope::fuzz {
namespace {

// Every id a decoded row carries resolves in the dictionary.
std::string CheckIds(const core::Trace& t) {
  for (const core::KernelRow& k : t.kernels) {
    if (!t.dict.has_signature(k.signature)) return absl::StrCat("kernel row with undefined signature ", k.signature);
  }
  for (const core::ApiCallRow& a : t.api_calls) {
    if (a.function == 0 || a.function > t.dict.function_count() || a.thread == 0 ||
        a.thread > t.dict.thread_count()) {
      return absl::StrCat("API row with undefined function ", a.function, " or thread ", a.thread);
    }
  }
  for (const core::NvtxRow& n : t.nvtx) {
    if (n.thread == 0 || n.thread > t.dict.thread_count()) return absl::StrCat("NVTX row with undefined thread ", n.thread);
  }
  for (const core::OverheadRow& o : t.overheads) {
    if (o.thread == 0 || o.thread > t.dict.thread_count()) {
      return absl::StrCat("overhead row with undefined thread ", o.thread);
    }
  }
  return "";
}

// A loaded trace accounts for the bytes it was given.
std::string CheckAccounting(const core::Trace& t, size_t size) {
  if (t.bytes_read + t.tail_bytes_dropped > size) {
    return absl::StrCat("read ", t.bytes_read, " + dropped ", t.tail_bytes_dropped, " bytes of ", size);
  }
  if (!t.corruption && t.bytes_read + t.tail_bytes_dropped != size) {
    return absl::StrCat("clean read of ", t.bytes_read, " + dropped ", t.tail_bytes_dropped, " bytes of ", size);
  }
  if (t.corruption && t.corruption->ok()) return "corruption recorded with an OK status";
  return CheckIds(t);
}

bool DocumentedRefusal(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) || absl::IsDataLoss(s);
}

// An anonymous in-memory file holding `bytes`, or -1.
int MemoryFile(std::string_view bytes) {
  const int fd = ::memfd_create("cuscope-fuzz", MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return fd;
}

// The same bytes through the file path of the reader.
absl::StatusOr<core::Trace> LoadThroughFile(std::string_view bytes) {
  const int fd = MemoryFile(bytes);
  if (fd < 0) return absl::InternalError("memfd_create or write failed");
  auto t = core::LoadTrace(absl::StrCat("/proc/self/fd/", fd));
  ::close(fd);
  return t;
}

// A directory of this process's own for export outputs, made once; empty when none can be made.
const std::string& ExportDir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/cuscope-fuzz-export-XXXXXX");
    return ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }();
  return dir;
}

}  // namespace

std::string CheckTraceReader(std::string_view bytes) {
  auto mem = core::LoadTraceFromBytes(std::string(bytes));
  auto file = LoadThroughFile(bytes);
  if (file.status().code() == absl::StatusCode::kInternal) return "";  // the test harness, not the reader
  if (mem.ok() != file.ok()) {
    return absl::StrCat("memory and file reads disagree: ", mem.status().ToString(), " vs ", file.status().ToString());
  }
  if (!mem.ok()) {
    if (!DocumentedRefusal(mem.status())) return absl::StrCat("undocumented refusal: ", mem.status().ToString());
    if (mem.status().code() != file.status().code()) {
      return absl::StrCat("refusals differ: ", mem.status().ToString(), " vs ", file.status().ToString());
    }
    return "";
  }
  const core::Trace& t = *mem;
  if (std::string problem = CheckAccounting(t, bytes.size()); !problem.empty()) return problem;
  const core::Trace& f = *file;
  if (f.chunks != t.chunks || f.bytes_read != t.bytes_read || f.tail_bytes_dropped != t.tail_bytes_dropped ||
      f.corruption.has_value() != t.corruption.has_value() || f.record_count() != t.record_count()) {
    return absl::StrCat("memory and file reads disagree: chunks ", t.chunks, "/", f.chunks, ", bytes ", t.bytes_read,
                        "/", f.bytes_read, ", tail ", t.tail_bytes_dropped, "/", f.tail_bytes_dropped, ", records ",
                        t.record_count(), "/", f.record_count());
  }

  // A clean trace cut anywhere after its header keeps the chunks before the cut and nothing else.
  if (t.corruption || t.tail_bytes_dropped > 0) return "";
  auto reader = core::TraceReader::FromBytes(std::string(bytes));
  if (!reader.ok()) return absl::StrCat("reader refuses what LoadTraceFromBytes read: ", reader.status().ToString());
  const size_t header_end = (*reader)->bytes_read();
  std::vector<size_t> cuts = {header_end, (header_end + bytes.size()) / 2, bytes.size() - 1};
  for (size_t cut : cuts) {
    if (cut < header_end || cut >= bytes.size()) continue;
    auto part = core::LoadTraceFromBytes(std::string(bytes.substr(0, cut)));
    if (!part.ok()) return absl::StrCat("cut at ", cut, " (header ends at ", header_end, ") refused: ", part.status().ToString());
    if (part->corruption) return absl::StrCat("cut at ", cut, " reported as corruption: ", part->corruption->ToString());
    if (std::string problem = CheckAccounting(*part, cut); !problem.empty()) {
      return absl::StrCat("cut at ", cut, ": ", problem);
    }
    if (part->chunks > t.chunks || part->record_count() > t.record_count()) {
      return absl::StrCat("cut at ", cut, " holds more than the whole trace");
    }
  }
  return "";
}

std::string CheckAnalyzer(std::string_view bytes) {
  auto trace = core::LoadTraceFromBytes(std::string(bytes));
  if (!trace.ok()) return "";
  analysis::AnalyzeOptions options;
  options.top_rows = 5;
  const analysis::Analysis a = analysis::Analyze(*trace, options);
  const std::string text = analysis::RenderAnalysisText(a, "fuzz.cuscope", options.top_rows);
  if (!absl::StartsWith(text, "cuscope analyze fuzz.cuscope: ")) return "text report lacks its first line";
  if (trace->truncated() && !absl::StrContains(text, "warning: ")) return "cut or damaged trace analyzed without a warning";
  const std::string json = analysis::RenderAnalysisJson(a, "fuzz.cuscope");
  v1::Report report;
  const auto parsed = google::protobuf::util::JsonStringToMessage(json, &report);
  if (!parsed.ok()) return absl::StrCat("JSON report does not parse back: ", parsed.ToString());
  if (report.summary().records() != trace->record_count()) {
    return absl::StrCat("JSON report counts ", report.summary().records(), " records, the trace holds ",
                        trace->record_count());
  }
  if (report.summary().truncated() != trace->truncated()) return "JSON report's truncated flag is wrong";
  if (static_cast<size_t>(report.findings_size()) != a.findings.size() ||
      static_cast<size_t>(report.warnings_size()) != a.warnings.size()) {
    return "JSON report lost findings or warnings";
  }
  // The same trace as two ranks of a job (`analyze A B`): summarized, folded, rendered.
  const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
  ranks::RankSetAnalyzer set{analysis::Thresholds()};
  for (int i = 0; i < 2; ++i) set.Add(ranks::SummarizeRank(timeline, "fuzz.cuscope", i, ranks::RankSummaryOptions()));
  const ranks::RankSetReport ranks_report = set.Finish();
  if (ranks_report.ranks.size() != 2) return "the rank set lost a rank";
  if (!absl::StartsWith(ranks::RenderRankSetText(ranks_report, 5), "cuscope analyze: 2 rank traces")) {
    return "the rank set's text lacks its first line";
  }
  v1::Report ranks_json;
  if (!google::protobuf::util::JsonStringToMessage(ranks::RenderRankSetJson(ranks_report), &ranks_json).ok()) {
    return "the rank set's JSON does not parse back";
  }
  // And its page (`report A B`): the document the page's script parses.
  google::protobuf::Struct page;
  if (!google::protobuf::util::JsonStringToMessage(report::BuildRankSetReportData(ranks_report), &page).ok()) {
    return "the rank set's page data does not parse back";
  }
  return "";
}

std::string CheckDump(std::string_view bytes) {
  auto reader = core::TraceReader::FromBytes(std::string(bytes));
  if (!reader.ok()) return "";
  std::FILE* sink = std::fopen("/dev/null", "w");
  if (sink == nullptr) return "";
  cli::DumpOptions options;
  options.byte_bound = core::TraceOutputBound(bytes.size());
  options.bound_reason = core::TraceOutputBoundReason(bytes.size());
  const absl::StatusOr<cli::DumpResult> dumped = cli::DumpTrace(**reader, options, sink);
  std::fclose(sink);
  if (dumped.ok()) {
    if (dumped->bytes > options.byte_bound) {
      return absl::StrCat("dump wrote ", dumped->bytes, " bytes for a ", bytes.size(), "-byte trace (the bound is ",
                          options.byte_bound, ")");
    }
    return "";
  }
  if (!absl::IsResourceExhausted(dumped.status()) && !absl::IsDataLoss(dumped.status())) {
    return absl::StrCat("dump failed with ", dumped.status().ToString());
  }
  return "";
}

std::string CheckExporter(std::string_view bytes) {
  const std::string& dir = ExportDir();
  const int fd = MemoryFile(bytes);
  if (dir.empty() || fd < 0) {
    if (fd >= 0) ::close(fd);
    return "";  // the test harness, not the exporter
  }
  const std::string input = absl::StrCat("/proc/self/fd/", fd);
  const std::string output = absl::StrCat(dir, "/out");
  const auto loaded = core::LoadTraceFromBytes(std::string(bytes));
  const size_t limit = kExportBytesPerInputByte * bytes.size() + kExportFixedBytes;
  std::string problem;
  for (const exporter::ExportFormat format : {exporter::ExportFormat::kPerfetto, exporter::ExportFormat::kChromeJson}) {
    for (const bool findings : {false, true}) {
      exporter::ExportOptions options;
      options.format = format;
      options.findings = findings;
      options.overwrite = true;
      const std::string what =
          std::string(exporter::ExportFormatName(format)) + (findings ? " with findings" : " without findings");
      const auto summary = exporter::ExportToFile(input, output, options);
      struct stat st {};
      const bool written = ::stat(output.c_str(), &st) == 0;
      ::unlink(output.c_str());
      if (!loaded.ok()) {
        if (summary.ok()) problem = absl::StrCat(what, ": exported what the reader refuses (", loaded.status().ToString(), ")");
        else if (summary.status().code() != loaded.status().code()) {
          problem = absl::StrCat(what, ": refused with ", summary.status().ToString(), ", the reader with ",
                                 loaded.status().ToString());
        } else if (written) {
          problem = absl::StrCat(what, ": a refused export left its output behind");
        }
      } else if (!summary.ok()) {
        problem = absl::StrCat(what, ": a trace the reader loads was not exported: ", summary.status().ToString());
      } else if (summary->bytes_written > limit || (written && static_cast<size_t>(st.st_size) > limit)) {
        problem = absl::StrCat(what, ": ", summary->bytes_written, " bytes written for a ", bytes.size(),
                               "-byte trace (the bound is ", limit, ")");
      } else if (loaded->truncated() && summary->warnings.empty()) {
        problem = absl::StrCat(what, ": a cut or damaged trace exported without a warning");
      }
      if (!problem.empty()) break;
    }
    if (!problem.empty()) break;
  }
  ::close(fd);
  if (!problem.empty()) return problem;
  return CheckDump(bytes);
}

std::string CheckControlRequest(std::string_view bytes) {
  auto request = control::ParseRequest(bytes);
  if (!request.ok()) {
    if (request.status().code() != absl::StatusCode::kInvalidArgument) {
      return absl::StrCat("a refusal that is not InvalidArgument: ", request.status().ToString());
    }
    if (request.status().message().empty()) return "a refusal without a sentence";
    return "";
  }
  auto size = control::FramedSize(bytes, control::kMaxRequestBytes);
  if (!size.ok() || *size != bytes.size()) return "accepted bytes that are not exactly one frame";
  if (request->protocol_version() == 0 || request->protocol_version() > control::kProtocolVersion) {
    return absl::StrCat("accepted protocol version ", request->protocol_version());
  }
  if (request->has_capture()) {
    const v1::CaptureRequest& c = request->capture();
    if (c.path().empty() || c.path()[0] != '/') return "accepted a relative capture path";
    if (c.path().find('\0') != std::string::npos) return "accepted a capture path with NUL";
    if (!(c.seconds() >= 0) || c.seconds() > control::kMaxCaptureSeconds) return "accepted seconds out of range";
    if (c.kind() != v1::CaptureRequest::KIND_WINDOW && c.kind() != v1::CaptureRequest::KIND_SNAPSHOT) {
      return "accepted a capture of no known kind";
    }
  } else if (!request->has_status() && !request->has_detach()) {
    return "accepted a request that asks for nothing";
  }
  auto again = control::ParseRequest(control::Frame(*request));
  if (!again.ok()) return absl::StrCat("an accepted request, framed again, is refused: ", again.status().message());
  if (again->SerializeAsString() != request->SerializeAsString()) return "an accepted request reads back different";
  return "";
}

}  // namespace cuscope::fuzz
