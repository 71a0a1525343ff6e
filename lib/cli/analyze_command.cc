// cuscope analyze TRACE [--format text|json] [--fail-on info|warning|error]
//                       [--threshold NAME=VALUE]... [--top N]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/analysis/analyzer.h"
#include "lib/cli/commands.h"
#include "lib/core/terminal_text.h"

namespace cuscope::cli {
namespace {

constexpr const char kAnalyzeUsage[] =
    "usage: cuscope analyze TRACE [--format text|json] [--fail-on info|warning|error]\n"
    "                             [--threshold NAME=VALUE]... [--top N]\n"
    "\n"
    "Says what holds the program back: the baseline (timeline window, kernel time, GPU utilization, launch\n"
    "rate), ranked findings with their evidence, then the tables behind them. A top-down trace (profile\n"
    "--top-down) adds its hot kernels with their verdicts; sampled GPU counters add their picture over time.\n"
    "  --format text|json   text for people (default); json follows proto/cuscope/v1/report.proto\n"
    "  --fail-on SEVERITY   exit 1 when a finding is at least this severe (for CI)\n"
    "  --threshold N=V      override a rule threshold; --threshold help lists them\n"
    "  --top N              rows per supporting table (default 10)\n";

int UsageError(const std::string& message) {
  std::fprintf(stderr, "cuscope: %s\n", core::EscapeTextForTerminal(message).c_str());
  return 2;
}

void PrintThresholds() {
  const analysis::Thresholds defaults;
  std::printf("thresholds (name, default, meaning):\n");
  for (const analysis::ThresholdInfo& info : analysis::ThresholdTable()) {
    std::printf("  %-30s %-10g %s\n", std::string(info.name).c_str(), defaults.*info.field,
                std::string(info.description).c_str());
  }
}

}  // namespace

int RunAnalyze(const Args& args) {
  analysis::AnalyzeOptions options;
  std::string path, format = "text";
  std::optional<analysis::Severity> fail_on;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kAnalyzeUsage, stdout);
      return 0;
    } else if (arg == "--format") {
      if (!value(&v) || (v != "text" && v != "json")) return UsageError("--format takes text or json");
      format = v;
    } else if (arg == "--fail-on") {
      if (!value(&v) || !(fail_on = analysis::ParseSeverity(v))) {
        return UsageError("--fail-on takes info, warning or error");
      }
    } else if (arg == "--threshold") {
      if (!value(&v)) return UsageError("--threshold takes NAME=VALUE");
      if (v == "help" || v == "list") {
        PrintThresholds();
        return 0;
      }
      const absl::Status status = analysis::ApplyThresholdOverride(v, &options.thresholds);
      if (!status.ok()) return UsageError(std::string(status.message()));
    } else if (arg == "--top") {
      char* end = nullptr;
      if (!value(&v) || (options.top_rows = std::strtoul(v.c_str(), &end, 10), *end != '\0') || v.empty()) {
        return UsageError("--top takes a number of rows");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return UsageError(absl::StrCat("analyze: unknown option '", arg, "' (see cuscope analyze --help)"));
    } else if (path.empty()) {
      path = arg;
    } else {
      return UsageError("analyze takes one trace file");
    }
  }
  if (path.empty()) return UsageError("analyze: no trace file given (usage: cuscope analyze TRACE)");

  absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
  if (!trace.ok()) return UsageError(std::string(trace.status().message()));  // names the path
  const analysis::Analysis result = analysis::Analyze(*trace, options);
  if (format == "json") {
    std::fputs(analysis::RenderAnalysisJson(result, path).c_str(), stdout);
    std::fputs("\n", stdout);
    // Warnings also go to stderr, where a pipeline reading the JSON still shows them to a person.
    for (const std::string& w : result.warnings) {
      std::fprintf(stderr, "cuscope: warning: %s\n", core::EscapeTextForTerminal(w).c_str());
    }
  } else {
    // Names were escaped where the findings and tables put them; this catches the rest of the
    // text (every section renders strings from the trace), keeping only its line breaks.
    std::fputs(core::EscapeTextForTerminal(analysis::RenderAnalysisText(result, path, options.top_rows)).c_str(),
               stdout);
  }
  if (fail_on && !result.findings.empty() && result.worst() >= *fail_on) return 1;
  return 0;
}

}  // namespace cuscope::cli
