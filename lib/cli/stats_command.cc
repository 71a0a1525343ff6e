// cuscope stats --report NAME[,NAME...] [--format text|csv|json] [--kernel-names STYLE] [-o PREFIX] TRACE
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/report_catalogue.h"
#include "lib/analysis/timeline.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/source_lines.h"
#include "lib/core/output_file.h"
#include "lib/core/terminal_text.h"

namespace cuscope::cli {
namespace {

std::string KnownReports() {
  std::vector<std::string> names;
  for (std::string_view n : analysis::ReportNames()) names.emplace_back(n);
  return absl::StrJoin(names, ", ");
}

constexpr char kTimeUnitError[] = "--timeunit takes nsec, usec, msec or sec";
constexpr char kOutputError[] = "stats: -o takes a file name prefix";

// What the command line asks for; the parser's actions write into it after the declaring function
// has returned, so it must outlive the parse.
struct StatsOptions {
  std::string path, format = "text", prefix;
  bool overwrite = false;
  std::vector<std::string> reports;
  core::KernelNameStyle names = core::KernelNameStyle::kBase;
  analysis::TimeUnit time_unit = analysis::TimeUnit::kNanoseconds;
};

void DeclareStatsOptions(ArgumentParser& parser, StatsOptions& o) {
  parser.Option({"--report", "-r"}, "--report takes NAME[,NAME...]", AppendCommaSeparated(&o.reports),
                "the reports, comma-separated: cuda_gpu_kern_sum, cuda_api_sum, ...");
  parser.Option(
      {"--format"}, "--format takes text, csv or json",
      [&](const std::string& v) {
        o.format = v;
        if (o.format != "text" && o.format != "csv" && o.format != "json") {
          return absl::InvalidArgumentError(absl::StrCat("unknown format '", o.format, "' (text, csv or json)"));
        }
        return absl::OkStatus();
      },
      "text (default), csv or json");
  parser.Option({"--kernel-names"}, "--kernel-names takes base, demangled or mangled", KeepKernelNameStyle(&o.names),
                "kernel names as shown: base (default), demangled or mangled (JSON and CSV keep the recorded names)");
  parser.Option(
      {"--timeunit"}, kTimeUnitError,
      [&](const std::string& v) {
        const std::optional<analysis::TimeUnit> unit = analysis::ParseTimeUnit(v);
        if (!unit) return absl::InvalidArgumentError(absl::StrCat(kTimeUnitError, ", not '", v, "'"));
        o.time_unit = *unit;
        return absl::OkStatus();
      },
      "the unit of the time columns: nsec (default), usec, msec or sec, as nsys stats");
  parser.Option(
      {"-o", "--output"}, kOutputError,
      [&](const std::string& v) {
        o.prefix = v;
        return o.prefix.empty() ? absl::InvalidArgumentError(kOutputError) : absl::OkStatus();
      },
      "each report into its own file, PREFIX_REPORT.txt, .csv or .json (as nsys stats -o)");
  parser.Switch(
      {"-f", "--force-overwrite"},
      [&](bool on) {
        o.overwrite = on;
        return absl::OkStatus();
      },
      "with -o: replace existing report files");
  // GPU time grouped one way or another: a shorthand for the report that groups it so.
  parser.Option(
      {"--by"}, "--by takes kernel, stack or nvtx",
      [&](const std::string& v) {
        if (v == "kernel") {
          o.reports.emplace_back("cuda_gpu_kern_sum");
        } else if (v == "stack") {
          o.reports.emplace_back("cuda_kern_stack_sum");
        } else if (v == "nvtx") {
          o.reports.emplace_back("nvtx_gpu_proj_sum");
        } else {
          return absl::InvalidArgumentError(absl::StrCat("--by takes kernel, stack or nvtx, not '", v, "'"));
        }
        return absl::OkStatus();
      },
      "GPU time by kernel (cuda_gpu_kern_sum), launch site (stack) or NVTX range (nvtx)");
  parser.UnknownOptionMessage([](const std::string& arg) { return absl::StrCat("stats: unknown option '", arg, "'"); });
  parser.Positional(KeepOne(&o.path, "stats takes one trace file"));
}

std::string StatsUsage() {
  return absl::StrCat(
      "usage: cuscope stats --report NAME[,NAME...] [--by kernel|stack|nvtx] [--format text|csv|json]\n"
      "                     [--kernel-names STYLE] [--timeunit nsec|usec|msec|sec] [-o PREFIX [-f]] TRACE\n"
      "--timeunit: the unit of the time columns (default nsec), as nsys stats --timeunit\n"
      "-o PREFIX: each report into its own file, PREFIX_REPORT.txt, .csv or .json (as nsys stats -o), for\n"
      "pandas.read_csv; without it, the reports go to standard output one after the other\n"
      "reports: ", KnownReports(), "\n"
      "--by: GPU time by kernel (cuda_gpu_kern_sum), by launch site (cuda_kern_stack_sum, with --stacks) or by\n"
      "NVTX range (nvtx_gpu_proj_sum)\n"
      "kern_metrics: the profiled kernels (CUSCOPE_METRICS): throughput, occupancy, top stall, roofline, "
      "verdict\n"
      "gpu_metrics: the GPU counters sampled over time (PM sampling, NVML): samples, min, average "
      "(time-weighted for PM samples) and max per device and counter\n" CUSCOPE_KERNEL_NAMES_USAGE);
}

// Every name given must be a report: one unknown name fails the command before the trace is read.
absl::Status CheckReportNames(const std::vector<std::string>& reports) {
  for (const std::string& name : reports) {
    bool known = false;
    for (std::string_view n : analysis::ReportNames()) known = known || n == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown report '", name, "'; known reports: ", KnownReports()));
  }
  return absl::OkStatus();
}

// Asked for everything, the reports a trace holds no data for are left out rather than printed empty.
void DropReportsWithoutData(const core::Trace& trace, std::vector<std::string>& reports) {
  if (trace.metrics.empty()) {
    // Asked for everything: the kernel-metrics table only when some kernel was profiled.
    reports.erase(std::remove(reports.begin(), reports.end(), "kern_metrics"), reports.end());
  }
  if (trace.launch_stacks.empty() && trace.graph_nodes.empty()) {
    // ... the launch-site table only when stacks were taken ...
    reports.erase(std::remove(reports.begin(), reports.end(), "cuda_kern_stack_sum"), reports.end());
  }
  if (trace.counter_samples.empty()) {
    // ... and the GPU-counters table only when counters were sampled.
    reports.erase(std::remove(reports.begin(), reports.end(), "gpu_metrics"), reports.end());
  }
}

// One report rendered alone: names in the chosen style in every format (JSON and CSV as well).
std::string RenderReport(const analysis::Table& built, const StatsOptions& o) {
  const analysis::Table table = analysis::WithTimeUnit(analysis::WithKernelNames(built, o.names), o.time_unit);
  if (o.format == "text") return core::EscapeTextForTerminal(analysis::RenderText(table));
  if (o.format == "csv") return analysis::RenderCsv(table);
  return analysis::RenderJson(table);
}

// -o PREFIX: a file per report, so that each can be read on its own (pandas.read_csv).
int WriteReportFiles(const analysis::Timeline& timeline, const StatsOptions& o) {
  const std::string extension = o.format == "text" ? ".txt" : absl::StrCat(".", o.format);
  for (const std::string& name : o.reports) {
    const std::string file = absl::StrCat(o.prefix, "_", name, extension);
    std::string body = RenderReport(*analysis::BuildReport(name, timeline), o);
    if (o.format == "json") body += "\n";
    if (absl::Status st = core::WriteOutputFile(file, body, o.overwrite); !st.ok()) {
      return PrintError(std::string(st.message()));
    }
    std::printf("wrote %s\n", core::EscapeForTerminal(file).c_str());
  }
  return 0;
}

// All reports in one stream, joined the way the format can be read back.
std::string JoinReports(const analysis::Timeline& timeline, const StatsOptions& o) {
  const std::vector<std::string>& reports = o.reports;
  const std::string& format = o.format;
  std::string out;
  if (format == "json") out += "[";
  for (size_t r = 0; r < reports.size(); ++r) {
    const std::string one = RenderReport(*analysis::BuildReport(reports[r], timeline), o);
    if (format == "text") {
      absl::StrAppend(&out, r ? "\n" : "", one);
    } else if (format == "csv") {
      // Several reports in one CSV stream: each starts with a "# name" line (-o PREFIX writes a file
      // per report, which pandas reads).
      if (reports.size() > 1) absl::StrAppend(&out, r ? "\n" : "", "# ", reports[r], "\n");
      absl::StrAppend(&out, one);
    } else {
      absl::StrAppend(&out, r ? "," : "", one);
    }
  }
  if (format == "json") out += "]\n";
  return out;
}

}  // namespace

int RunStats(const Args& args) {
  StatsOptions o;
  ArgumentParser parser;
  DeclareStatsOptions(parser, o);
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), StatsUsage())) return *exit;
  const bool all_reports = o.reports.empty();
  if (all_reports) {
    for (std::string_view n : analysis::ReportNames()) o.reports.emplace_back(n);
  }
  if (absl::Status st = CheckReportNames(o.reports); !st.ok()) return PrintError(st.message());
  if (o.path.empty()) return PrintError("stats: no trace file given");

  absl::StatusOr<core::Trace> trace = core::LoadTrace(o.path);
  if (!trace.ok()) return PrintError(std::string(trace.status().message()));  // names the path
  AddSourceLines(*trace);
  if (trace->truncated()) {
    std::fprintf(stderr, "cuscope: warning: %s is truncated (%llu bytes dropped at the tail%s); tables cover what was read\n",
                 core::EscapeForTerminal(o.path).c_str(), static_cast<unsigned long long>(trace->tail_bytes_dropped),
                 trace->corruption ? ", damaged block" : "");
  }
  if (all_reports) DropReportsWithoutData(*trace, o.reports);
  const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
  if (!o.prefix.empty()) return WriteReportFiles(timeline, o);
  const std::string out = JoinReports(timeline, o);
  // Text is for a terminal: RenderText escaped the names and the rest was escaped above. CSV and
  // JSON keep the strings whole (JSON escapes every control character).
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace cuscope::cli
