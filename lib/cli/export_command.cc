// cuscope export [--format perfetto|chrome-json|sqlite] TRACE [-o FILE] [-f] [--no-findings] [--bucket-us N]
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/source_lines.h"
#include "lib/core/terminal_text.h"
#include "lib/export/exporter.h"
#include "lib/export/rank_export.h"
#include "lib/export/sqlite_exporter.h"

namespace cuscope::cli {
namespace {

constexpr const char kExportUsage[] =
    "usage: cuscope export [--format perfetto|chrome-json|sqlite] TRACE [-o FILE] [-f] [--no-findings]\n"
    "                      [--bucket-us N]\n"
    "       cuscope export RANK_TRACE RANK_TRACE... -o FILE [same options]\n"
    "\n"
    "Writes TRACE as a timeline for trace viewers: a track per GPU stream under its GPU with a\n"
    "utilization counter, a track per host thread with its CUDA calls and NVTX ranges, arrows from\n"
    "each launch to its kernel, and the findings of `cuscope analyze` on a track of their own.\n"
    "  --format perfetto       Perfetto protobuf trace (default); open it at https://ui.perfetto.dev\n"
    "  --format chrome-json    Chrome trace-event JSON (chrome://tracing, Perfetto, speedscope)\n"
    "  --format sqlite         SQLite database: nsys's tables (CUPTI_ACTIVITY_KIND_KERNEL, ..._RUNTIME,\n"
    "                          NVTX_EVENTS, StringIds, ...) and cuscope's own (CUSCOPE_*); SQL written\n"
    "                          for an nsys export runs on it; the Python package reads it\n"
    "  -o, --output FILE       output file (default: TRACE's name in the current directory, .cuscope\n"
    "                          replaced by .pftrace, .json or .sqlite)\n"
    "  -f, --force-overwrite [true|false]\n"
    "                          replace an existing output file (also as --force-overwrite=true)\n"
    "  --no-findings           skip the analysis pass: no findings track, and the trace is read one\n"
    "                          chunk at a time only (the analysis holds the whole trace)\n"
    "  --bucket-us N           width of the GPU utilization buckets in microseconds (default: 1, 2 or\n"
    "                          5 times a power of ten, at least 1 us, 5000 of which cover the trace)\n"
    "\n"
    "Several traces (the ranks of a job) go into one file, a process per rank on one clock (each\n"
    "trace's CUPTI time placed on the wall clock by its clock references); -o is then required.\n";

// The trace's file name in the current directory (never beside the trace: its folder may be read-only
// or shared), its .cuscope replaced by the format's extension.
std::string DefaultOutput(const std::string& trace, std::string_view extension) {
  std::string base = trace;
  if (const size_t slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  if (absl::EndsWith(base, ".cuscope")) base.resize(base.size() - 8);
  return base + std::string(extension);
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    std::fprintf(stderr, "cuscope: warning: %s\n", core::EscapeTextForTerminal(w).c_str());
  }
}

int RunSqliteExport(const std::string& trace, const std::string& output, bool overwrite, bool findings) {
  exporter::SqliteExportOptions options;
  options.overwrite = overwrite;
  options.findings = findings;
  options.add_source_lines = [](core::Dictionary& dict) { AddSourceLines(dict); };
  absl::StatusOr<exporter::SqliteExportSummary> summary = exporter::ExportToSqlite(trace, output, options);
  if (!summary.ok()) return PrintError(std::string(summary.status().message()));
  PrintWarnings(summary->warnings);
  std::printf(
      "wrote %s (sqlite, %.1f MB): %llu kernels (%llu more replayed for metrics), %llu copies and memsets, "
      "%llu API calls, %llu NVTX ranges, %llu findings\n",
      core::EscapeForTerminal(output).c_str(), static_cast<double>(summary->bytes_written) / 1e6,
      static_cast<unsigned long long>(summary->kernels), static_cast<unsigned long long>(summary->replayed_kernels),
      static_cast<unsigned long long>(summary->memcpys + summary->memsets),
      static_cast<unsigned long long>(summary->api_calls), static_cast<unsigned long long>(summary->nvtx_ranges),
      static_cast<unsigned long long>(summary->findings));
  std::printf("read it with sqlite3, pandas.read_sql or cuscope.read_sqlite (python/)\n");
  return 0;
}

// Chrome JSON takes about 8 bytes for each byte of the trace (H200 traces: 310 KB of JSON for
// 38 KB; 5M launches came to 1.8 GB); viewers load JSON past about 1 GB slowly, if at all. Said
// before the export starts, which may take minutes.
constexpr uint64_t kJsonBytesPerTraceByte = 8;
constexpr uint64_t kLargeJsonBytes = 1ull << 30;

void WarnOfLargeJson(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const uint64_t estimate = static_cast<uint64_t>(st.st_size) * kJsonBytesPerTraceByte;
  if (estimate < kLargeJsonBytes) return;
  std::fprintf(stderr,
               "cuscope: warning: the Chrome JSON of this %.0f MB trace will be about %.1f GB, which "
               "chrome://tracing and ui.perfetto.dev load slowly if at all; the default format (perfetto) "
               "is about 2.5x smaller and loads faster\n",
               st.st_size / 1e6, estimate / 1e9);
}

}  // namespace

int RunExport(const Args& args) {
  exporter::ExportOptions options;
  options.add_source_lines = [](core::Dictionary& dict) { AddSourceLines(dict); };
  std::vector<std::string> paths;
  std::string output;
  ArgumentParser parser;
  bool sqlite = false;
  parser.Option(
      {"--format"}, "export: --format takes perfetto, chrome-json or sqlite",
      [&](const std::string& v) {
        sqlite = v == "sqlite";
        if (sqlite) return absl::OkStatus();
        std::optional<exporter::ExportFormat> format = exporter::ParseExportFormat(v);
        if (!format) {
          return absl::InvalidArgumentError(
              absl::StrCat("export: unknown format '", v, "' (perfetto, chrome-json or sqlite)"));
        }
        options.format = *format;
        return absl::OkStatus();
      },
      "perfetto (default; ui.perfetto.dev), chrome-json (Chrome trace-event JSON) or sqlite (nsys's tables)");
  constexpr char kOutputError[] = "export: -o takes an output file";
  parser.Option(
      {"-o", "--output"}, kOutputError,
      [&](const std::string& v) {
        output = v;
        return output.empty() ? absl::InvalidArgumentError(kOutputError) : absl::OkStatus();
      },
      "output file (default: TRACE's name with .pftrace, .json or .sqlite)");
  parser.Switch(
      {"-f", "--force-overwrite"},
      [&](bool on) {
        options.overwrite = on;
        return absl::OkStatus();
      },
      "replace an existing output file (also as --force-overwrite=true)");
  parser.Flag(
      {"--no-findings"},
      [&] {
        options.findings = false;
        return absl::OkStatus();
      },
      "skip the analysis pass: no findings track, and the trace is read a chunk at a time");
  constexpr char kBucketError[] = "export: --bucket-us takes a width in microseconds (at least 0.001)";
  parser.Option(
      {"--bucket-us"}, kBucketError,
      [&](const std::string& v) {
        double us = 0;
        if (!absl::SimpleAtod(v, &us) || !(us >= 0.001) || us > 1e12) return absl::InvalidArgumentError(kBucketError);
        options.bucket_ns = static_cast<uint64_t>(std::llround(us * 1000.0));
        return absl::OkStatus();
      },
      "width of the GPU utilization buckets in microseconds (default: 5000 cover the trace)");
  parser.UnknownOptionMessage(UnknownOptionOf("export"));
  parser.Positional([&](const std::string& arg) {
    paths.push_back(arg);
    return absl::OkStatus();
  });
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kExportUsage)) return *exit;
  if (paths.empty()) return PrintError("export: no trace file given (usage: cuscope export TRACE -o FILE)");
  if (paths.size() > 1 && output.empty()) {
    return PrintError("export: several traces go into one file: name it with -o FILE");
  }
  if (sqlite) {
    if (paths.size() > 1) return PrintError("export: --format sqlite takes one trace");
    if (output.empty()) output = DefaultOutput(paths.front(), ".sqlite");
    return RunSqliteExport(paths.front(), output, options.overwrite, options.findings);
  }
  if (output.empty()) {
    output = DefaultOutput(paths.front(), options.format == exporter::ExportFormat::kPerfetto ? ".pftrace" : ".json");
  }
  if (options.format == exporter::ExportFormat::kChromeJson) {
    for (const std::string& path : paths) WarnOfLargeJson(path);
  }

  absl::StatusOr<exporter::ExportSummary> summary = paths.size() > 1
                                                        ? exporter::ExportRanksToFile(paths, output, options)
                                                        : exporter::ExportToFile(paths.front(), output, options);
  if (!summary.ok()) return PrintError(std::string(summary.status().message()));
  PrintWarnings(summary->warnings);
  std::printf(
      "wrote %s (%s, %.1f MB): %llu kernels, %llu copies and memsets, %llu API calls, %llu flows, "
      "%llu NVTX ranges, %llu findings (%llu drawn with their spans)\n",
      core::EscapeForTerminal(output).c_str(), std::string(exporter::ExportFormatName(options.format)).c_str(),
      static_cast<double>(summary->bytes_written) / 1e6, static_cast<unsigned long long>(summary->kernels),
      static_cast<unsigned long long>(summary->memcpys + summary->memsets),
      static_cast<unsigned long long>(summary->api_calls), static_cast<unsigned long long>(summary->flows),
      static_cast<unsigned long long>(summary->nvtx_ranges), static_cast<unsigned long long>(summary->findings_total),
      static_cast<unsigned long long>(summary->findings));
  if (options.format == exporter::ExportFormat::kPerfetto) {
    std::printf("open it at https://ui.perfetto.dev (Open trace file)\n");
  }
  return 0;
}

}  // namespace cuscope::cli
