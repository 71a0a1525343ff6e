// cuscope analyze TRACE [--format text|json] [--fail-on info|warning|error]
//                       [--threshold NAME=VALUE]... [--top N] [--kernel-names STYLE]
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/analyzer.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/rank_set_options.h"
#include "lib/cli/source_lines.h"
#include "lib/core/terminal_text.h"
#include "lib/ranks/rank_traces.h"

namespace cuscope::cli {
namespace {

constexpr const char kAnalyzeUsage[] =
    "usage: cuscope analyze TRACE [--format text|json] [--fail-on info|warning|error]\n"
    "                             [--threshold NAME=VALUE]... [--top N] [--kernel-names STYLE]\n"
    "       cuscope analyze RANK_TRACE RANK_TRACE... [--step NAME] [-j N] [same options]\n"
    "\n"
    "Says what holds the program back: the baseline (timeline window, kernel time, GPU utilization, launch\n"
    "rate), ranked findings with their evidence, then the tables behind them. A top-down trace (profile\n"
    "--top-down) adds its hot kernels with their verdicts; sampled GPU counters add their picture over time.\n"
    "\n"
    "Given the traces of a job's ranks (profile -o rank_%r under torchrun, mpirun or srun), analyzes them\n"
    "together on one clock: NCCL's share and overlap per rank, each collective's arrival skew and the rank\n"
    "that comes late (and why), and the step imbalance.\n" CUSCOPE_RANK_SET_OPTIONS_USAGE
    "  --format text|json   text for people (default); json follows proto/cuscope/v1/report.proto\n"
    "  --fail-on SEVERITY   exit 1 when a finding is at least this severe (for CI)\n"
    "  --threshold N=V      override a rule threshold; --threshold help lists them\n"
    "  --top N              rows per supporting table (default 10)\n" CUSCOPE_KERNEL_NAMES_USAGE;

void PrintThresholds() {
  const analysis::Thresholds defaults;
  std::printf("thresholds (name, default, meaning):\n");
  for (const analysis::ThresholdInfo& info : analysis::ThresholdTable()) {
    std::printf("  %-30s %-10g %s\n", std::string(info.name).c_str(), defaults.*info.field,
                std::string(info.description).c_str());
  }
}

// Several traces: the ranks of a job, analyzed together.
int AnalyzeRanks(const std::vector<std::string>& paths, const ranks::RankTracesOptions& options,
                 const std::string& format, size_t top_rows, std::optional<analysis::Severity> fail_on) {
  absl::StatusOr<ranks::RankSetReport> report = ranks::AnalyzeRankTraces(paths, options);
  if (!report.ok()) return PrintError(std::string(report.status().message()));
  if (format == "json") {
    std::fputs(ranks::RenderRankSetJson(*report).c_str(), stdout);
    std::fputs("\n", stdout);
    for (const std::string& w : report->warnings) {
      std::fprintf(stderr, "cuscope: warning: %s\n", core::EscapeTextForTerminal(w).c_str());
    }
  } else {
    std::fputs(core::EscapeTextForTerminal(ranks::RenderRankSetText(*report, top_rows)).c_str(), stdout);
  }
  if (fail_on) {
    for (const analysis::Finding& f : report->findings) {
      if (f.severity >= *fail_on) return 1;
    }
  }
  return 0;
}

}  // namespace

int RunAnalyze(const Args& args) {
  analysis::AnalyzeOptions options;
  std::vector<std::string> paths;
  std::string format = "text";
  ranks::RankTracesOptions rank_options;
  std::optional<analysis::Severity> fail_on;
  core::KernelNameStyle names = core::KernelNameStyle::kBase;
  bool list_thresholds = false;
  ArgumentParser parser;
  parser.Option(
      {"--format"}, "--format takes text or json",
      KeepTextOrJson(&format),
      "text for people (default) or json (proto/cuscope/v1/report.proto)");
  parser.Option(
      {"--fail-on"}, "--fail-on takes info, warning or error",
      [&](const std::string& v) {
        if (!(fail_on = analysis::ParseSeverity(v)))
          return absl::InvalidArgumentError("--fail-on takes info, warning or error");
        return absl::OkStatus();
      },
      "exit 1 when a finding is at least this severe: info, warning or error (for CI)");
  parser.Option(
      {"--threshold"}, "--threshold takes NAME=VALUE",
      [&](const std::string& v) -> Next {
        if (v == "help" || v == "list") {
          list_thresholds = true;
          return Next::Stop();
        }
        return analysis::ApplyThresholdOverride(v, &options.thresholds);
      },
      "override a rule threshold, NAME=VALUE; --threshold help lists them");
  parser.Option(
      {"--top"}, "--top takes a number of rows",
      [&](const std::string& v) {
        char* end = nullptr;
        if ((options.top_rows = std::strtoul(v.c_str(), &end, 10), *end != '\0') || v.empty()) {
          return absl::InvalidArgumentError("--top takes a number of rows");
        }
        return absl::OkStatus();
      },
      "rows per supporting table (default 10)");
  parser.Option({"--kernel-names"}, "--kernel-names takes base, demangled or mangled", KeepKernelNameStyle(&names),
                "kernel names as shown: base (default), demangled or mangled (JSON and CSV keep the recorded names)");
  AddRankSetOptions(parser, &rank_options);
  parser.UnknownOptionMessage(UnknownOptionOf("analyze"));
  parser.Positional([&](const std::string& arg) {
    paths.push_back(arg);
    return absl::OkStatus();
  });
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kAnalyzeUsage)) return *exit;
  if (list_thresholds) {
    PrintThresholds();
    return 0;
  }
  if (paths.empty()) return PrintError("analyze: no trace file given (usage: cuscope analyze TRACE)");
  if (paths.size() > 1) {
    rank_options.summary.thresholds = options.thresholds;
    return AnalyzeRanks(paths, rank_options, format, options.top_rows, fail_on);
  }
  const std::string& path = paths.front();

  absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
  if (!trace.ok()) return PrintError(std::string(trace.status().message()));  // names the path
  AddSourceLines(*trace);
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
    std::fputs(core::EscapeTextForTerminal(analysis::RenderAnalysisText(result, path, options.top_rows, names)).c_str(),
               stdout);
  }
  if (fail_on && !result.findings.empty() && result.worst() >= *fail_on) return 1;
  return 0;
}

}  // namespace cuscope::cli
