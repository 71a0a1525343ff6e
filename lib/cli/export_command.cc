// cuscope export [--format perfetto|chrome-json] TRACE [-o FILE] [-f] [--no-findings] [--bucket-us N]
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/cli/commands.h"
#include "lib/core/terminal_text.h"
#include "lib/export/exporter.h"

namespace cuscope::cli {
namespace {

constexpr const char kExportUsage[] =
    "usage: cuscope export [--format perfetto|chrome-json] TRACE [-o FILE] [-f] [--no-findings]\n"
    "                      [--bucket-us N]\n"
    "\n"
    "Writes TRACE as a timeline for trace viewers: a track per GPU stream under its GPU with a\n"
    "utilization counter, a track per host thread with its CUDA calls and NVTX ranges, arrows from\n"
    "each launch to its kernel, and the findings of `cuscope analyze` on a track of their own.\n"
    "  --format perfetto       Perfetto protobuf trace (default); open it at https://ui.perfetto.dev\n"
    "  --format chrome-json    Chrome trace-event JSON (chrome://tracing, Perfetto, speedscope)\n"
    "  -o, --output FILE       output file (default: TRACE with .pftrace or .json for .cuscope)\n"
    "  -f, --force-overwrite   replace an existing output file\n"
    "  --no-findings           skip the analysis pass: no findings track, and the trace is read one\n"
    "                          chunk at a time only (the analysis holds the whole trace)\n"
    "  --bucket-us N           width of the GPU utilization buckets in microseconds (default: 1, 2 or\n"
    "                          5 times a power of ten, at least 1 us, 5000 of which cover the trace)\n";

int UsageError(const std::string& message) {
  std::fprintf(stderr, "cuscope: %s\n", core::EscapeTextForTerminal(message).c_str());
  return 2;
}

std::string DefaultOutput(const std::string& trace, exporter::ExportFormat format) {
  std::string base = trace;
  if (absl::EndsWith(base, ".cuscope")) base.resize(base.size() - 8);
  return absl::StrCat(base, format == exporter::ExportFormat::kPerfetto ? ".pftrace" : ".json");
}

}  // namespace

int RunExport(const Args& args) {
  exporter::ExportOptions options;
  std::string path, output;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kExportUsage, stdout);
      return 0;
    } else if (arg == "--format") {
      if (!value(&v)) return UsageError("export: --format takes perfetto or chrome-json");
      std::optional<exporter::ExportFormat> format = exporter::ParseExportFormat(v);
      if (!format) return UsageError(absl::StrCat("export: unknown format '", v, "' (perfetto or chrome-json)"));
      options.format = *format;
    } else if (arg == "-o" || arg == "--output") {
      if (!value(&output) || output.empty()) return UsageError("export: -o takes an output file");
    } else if (arg == "-f" || arg == "--force-overwrite") {
      options.overwrite = true;
    } else if (arg == "--no-findings") {
      options.findings = false;
    } else if (arg == "--bucket-us") {
      double us = 0;
      if (!value(&v) || !absl::SimpleAtod(v, &us) || !(us >= 0.001) || us > 1e12) {
        return UsageError("export: --bucket-us takes a width in microseconds (at least 0.001)");
      }
      options.bucket_ns = static_cast<uint64_t>(std::llround(us * 1000.0));
    } else if (!arg.empty() && arg[0] == '-') {
      return UsageError(absl::StrCat("export: unknown option '", arg, "' (see cuscope export --help)"));
    } else if (path.empty()) {
      path = arg;
    } else {
      return UsageError("export takes one trace file");
    }
  }
  if (path.empty()) return UsageError("export: no trace file given (usage: cuscope export TRACE -o FILE)");
  if (output.empty()) output = DefaultOutput(path, options.format);

  absl::StatusOr<exporter::ExportSummary> summary = exporter::ExportToFile(path, output, options);
  if (!summary.ok()) return UsageError(std::string(summary.status().message()));
  for (const std::string& w : summary->warnings) {
    std::fprintf(stderr, "cuscope: warning: %s\n", core::EscapeTextForTerminal(w).c_str());
  }
  std::printf(
      "wrote %s (%s, %.1f MB): %llu kernels, %llu copies and memsets, %llu API calls, %llu flows, "
      "%llu NVTX ranges, %llu findings\n",
      core::EscapeForTerminal(output).c_str(), std::string(exporter::ExportFormatName(options.format)).c_str(),
      static_cast<double>(summary->bytes_written) / 1e6, static_cast<unsigned long long>(summary->kernels),
      static_cast<unsigned long long>(summary->memcpys + summary->memsets),
      static_cast<unsigned long long>(summary->api_calls), static_cast<unsigned long long>(summary->flows),
      static_cast<unsigned long long>(summary->nvtx_ranges), static_cast<unsigned long long>(summary->findings));
  if (options.format == exporter::ExportFormat::kPerfetto) {
    std::printf("open it at https://ui.perfetto.dev (Open trace file)\n");
  }
  return 0;
}

}  // namespace cuscope::cli
