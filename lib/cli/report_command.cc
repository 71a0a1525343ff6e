// cuscope report TRACE [-o FILE] [-f] [--threshold NAME=VALUE]... [--max-slices N]
// cuscope report RANK_TRACE RANK_TRACE... -o FILE [-f] [--step NAME] [-j N] [--threshold NAME=VALUE]...
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/analyzer.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/rank_set_options.h"
#include "lib/cli/source_lines.h"
#include "lib/core/output_file.h"
#include "lib/core/terminal_text.h"
#include "lib/report/html_report.h"
#include "lib/report/rank_set_page.h"
#include "lib/ranks/rank_traces.h"

namespace cuscope::cli {
namespace {

constexpr const char kReportUsage[] =
    "usage: cuscope report TRACE [-o FILE] [-f] [--threshold NAME=VALUE]... [--max-slices N]\n"
    "       cuscope report RANK_TRACE RANK_TRACE... -o FILE [-f] [--step NAME] [-j N] [--threshold NAME=VALUE]...\n"
    "\n"
    "Writes one self-contained HTML file (no network access needed to view it): the ranked findings, a zoomable\n"
    "timeline of GPU streams and host threads, GPU utilization over time, the roofline of the profiled kernels\n"
    "and the summary tables.\n"
    "\n"
    "Given the traces of a job's ranks, the page of `cuscope analyze RANK_TRACE...`: the findings across the\n"
    "ranks, the ranks side by side (step time and GPU work, communication exposed and overlapped, late\n"
    "arrivals at collectives) and the tables (cuscope export RANK_TRACE... -o FILE draws their timeline).\n"
    "  -o, --output FILE    where to write it (default for one trace: its name with .html, in the current\n"
    "                       directory; several traces need it)\n"
    "  -f, --force-overwrite [true|false]\n"
    "                       replace an existing output file (without it, an existing file is refused;\n"
    "                       also as --force-overwrite=true)\n"
    "  --threshold N=V      override a rule threshold, as for cuscope analyze\n"
    "  --max-slices N       timeline slices to draw in all, roughly (default 60000); busier lanes merge short\n"
    "                       slices, and the page says how many\n" CUSCOPE_RANK_SET_OPTIONS_USAGE;

// run_1234.cuscope -> run_1234.html, in the current directory.
std::string DefaultOutput(const std::string& trace_path) {
  std::string base = trace_path.substr(trace_path.find_last_of('/') + 1);
  if (absl::EndsWith(base, ".cuscope")) base.resize(base.size() - 8);
  return absl::StrCat(base.empty() ? "report" : base, ".html");
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    std::fprintf(stderr, "cuscope: warning: %s\n", core::EscapeTextForTerminal(w).c_str());
  }
}

// Several traces: the page of a job's ranks analyzed together.
int ReportRanks(const std::vector<std::string>& paths, const ranks::RankTracesOptions& options,
                const std::string& output, bool overwrite, size_t max_table_rows) {
  // Created first, so that an existing file is refused before the traces are read.
  absl::StatusOr<std::unique_ptr<core::OutputFile>> file = core::OutputFile::Create(output, overwrite);
  if (!file.ok()) return PrintError(std::string(file.status().message()));
  absl::StatusOr<ranks::RankSetReport> set = ranks::AnalyzeRankTraces(paths, options);
  if (!set.ok()) return PrintError(std::string(set.status().message()));  // the file goes with `file`
  const std::string html = report::RenderRankSetHtmlReport(*set, max_table_rows);
  (*file)->Append(html);
  if (absl::Status s = (*file)->Close(); !s.ok()) return PrintError(std::string(s.message()));
  PrintWarnings(set->warnings);
  std::printf("cuscope: wrote %s (%zu ranks, %zu findings, %.1f KiB)\n", core::EscapeForTerminal(output).c_str(),
              set->ranks.size(), set->findings.size(), static_cast<double>(html.size()) / 1024.0);
  return 0;
}

}  // namespace

int RunReport(const Args& args) {
  std::vector<std::string> paths;
  std::string output;
  bool overwrite = false;
  analysis::AnalyzeOptions options;
  report::ReportDataOptions data_options;
  ranks::RankTracesOptions rank_options;
  ArgumentParser parser;
  parser.Option(
      {"-o", "--output"}, "--output takes a file name",
      [&](const std::string& v) {
        output = v;
        return absl::OkStatus();
      },
      "where to write the HTML file (default for one trace: its name with .html)");
  parser.Switch(
      {"-f", "--force-overwrite"},
      [&](bool on) {
        overwrite = on;
        return absl::OkStatus();
      },
      "replace an existing output file (also as --force-overwrite=true)");
  parser.Option(
      {"--threshold"}, "--threshold takes NAME=VALUE",
      [&](const std::string& v) { return analysis::ApplyThresholdOverride(v, &options.thresholds); },
      "override a rule threshold, NAME=VALUE, as for cuscope analyze");
  constexpr char kMaxSlicesError[] = "--max-slices takes a number of at least 100";
  parser.Option(
      {"--max-slices"}, kMaxSlicesError,
      [&](const std::string& v) {
        // SimpleAtoi refuses a sign and a number past 64 bits, which strtoull would wrap or saturate.
        uint64_t n = 0;
        if (!absl::SimpleAtoi(v, &n) || v[0] == '+' || n < 100) return absl::InvalidArgumentError(kMaxSlicesError);
        data_options.max_slices = n;
        return absl::OkStatus();
      },
      "timeline slices to draw in all, roughly (default 60000)");
  AddRankSetOptions(parser, &rank_options);
  parser.UnknownOptionMessage(UnknownOptionOf("report"));
  parser.Positional([&](const std::string& arg) {
    paths.push_back(arg);
    return absl::OkStatus();
  });
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kReportUsage)) return *exit;
  if (paths.empty()) return PrintError("report: no trace file given (usage: cuscope report TRACE -o FILE)");
  if (paths.size() > 1) {
    if (output.empty()) return PrintError("report: several traces make one page: name it with -o FILE");
    rank_options.summary.thresholds = options.thresholds;
    return ReportRanks(paths, rank_options, output, overwrite, data_options.max_table_rows);
  }
  const std::string& path = paths.front();
  if (output.empty()) output = DefaultOutput(path);

  absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
  if (!trace.ok()) return PrintError(std::string(trace.status().message()));  // names the path
  AddSourceLines(*trace);
  // Created before the analysis, so that an existing file is refused at once; removed again if
  // anything fails.
  absl::StatusOr<std::unique_ptr<core::OutputFile>> file = core::OutputFile::Create(output, overwrite);
  if (!file.ok()) return PrintError(std::string(file.status().message()));
  const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
  const analysis::Analysis result = analysis::Analyze(timeline, options);
  const std::string html = report::RenderHtmlReport(timeline, result, path, data_options);
  (*file)->Append(html);
  if (absl::Status s = (*file)->Close(); !s.ok()) return PrintError(std::string(s.message()));
  PrintWarnings(result.warnings);
  std::printf("cuscope: wrote %s (%zu findings, %.1f KiB)\n", core::EscapeForTerminal(output).c_str(), result.findings.size(),
              static_cast<double>(html.size()) / 1024.0);
  return 0;
}

}  // namespace cuscope::cli
