#include "lib/cli/man_page.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/cli/profile_options.h"

namespace cuscope::cli {
namespace {

constexpr const char kManUsage[] =
    "usage: cuscope man\n"
    "\n"
    "Prints the manual page cuscope(1) (troff): every command with its usage and options. The build\n"
    "writes it to share/man/man1/cuscope.1: man ./build/share/man/man1/cuscope.1\n";

// `text` as troff reads it literally: a backslash is \e, a '-' is \- (a minus, as options are
// typed, not a hyphen), and a line may not start with a control character.
std::string Troff(absl::string_view text) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::string out = !line.empty() && (line[0] == '.' || line[0] == '\'') ? "\\&" : "";
    for (char c : line) {
      if (c == '\\') {
        out += "\\e";
      } else if (c == '-') {
        out += "\\-";
      } else {
        out += c;
      }
    }
    lines.push_back(std::move(out));
  }
  return absl::StrJoin(lines, "\n");
}

// An option's names and what follows them, for a .TP heading.
std::string OptionHeading(const ArgumentParser::Declaration& option) {
  std::string heading;
  for (const std::string& name : option.names) {
    absl::StrAppend(&heading, heading.empty() ? "" : ", ", "\\fB", Troff(name), "\\fR");
  }
  switch (option.takes) {
    case ArgumentParser::Takes::kNextArgument:
      absl::StrAppend(&heading, " \\fIVALUE\\fR");
      break;
    case ArgumentParser::Takes::kTrueOrFalse:
      absl::StrAppend(&heading, " [\\fBtrue\\fR|\\fBfalse\\fR]");
      break;
    case ArgumentParser::Takes::kInlineValueOnly:
      absl::StrAppend(&heading, "=\\fIVALUE\\fR");
      break;
    case ArgumentParser::Takes::kNothing:
      break;
  }
  return heading;
}

}  // namespace

std::string ManPage(const std::vector<CommandDescription>& commands) {
  const std::string version(absl::StripSuffix(VersionLine(), "\n"));
  std::string page = absl::StrCat(
      ".TH CUSCOPE 1 \"\" \"", Troff(version), "\" \"User Commands\"\n",
      // Option and variable names are not to be hyphenated, nor spaced out to fill a line.
      ".nh\n"
      ".ad l\n"
      ".SH NAME\n"
      "cuscope \\- profile CUDA programs and read what they did\n"
      ".SH SYNOPSIS\n"
      ".B cuscope\n"
      ".I command\n"
      ".RI [ options ]\n"
      ".RI [ arguments ]\n"
      ".br\n"
      ".B cuscope help\n"
      ".I command\n"
      ".SH DESCRIPTION\n"
      "cuscope records what a CUDA program does (its kernels, copies, API calls, NVTX ranges and, on\n"
      "request, kernel metrics and GPU counters) into a trace file, and reads traces: what holds the\n"
      "program back, summary tables, HTML reports, timelines for trace viewers, comparisons of runs.\n"
      "It takes nsys's habits: \\fB\\-\\-name=value\\fR for every long option, switches that take\n"
      "\\fBtrue\\fR or \\fBfalse\\fR (\\fB\\-f true ./app\\fR runs ./app), and nsys's trace names.\n"
      ".PP\n"
      "Each command has its own options, listed below; \\fBcuscope\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR\n"
      "prints a command's usage, as here.\n"
      ".SH COMMANDS\n");
  for (const CommandDescription& command : commands) {
    absl::StrAppend(&page, ".SS ", command.name, "\n", Troff(command.summary), "\n.PP\n.nf\n",
                    Troff(absl::StripSuffix(command.usage, "\n")), "\n.fi\n");
    if (command.options.empty()) continue;
    absl::StrAppend(&page, ".PP\nOptions of \\fBcuscope ", command.name, "\\fR:\n");
    for (const ArgumentParser::Declaration& option : command.options) {
      absl::StrAppend(&page, ".TP\n", OptionHeading(option), "\n", Troff(option.description), "\n");
    }
  }
  absl::StrAppend(&page,
                  ".SH ENVIRONMENT\n"
                  "\\fBcuscope profile\\fR hands its options to the collector in the program as environment\n"
                  "variables; a program started otherwise (the collector injected with CUDA_INJECTION64_PATH,\n"
                  "preloaded or linked) reads the same variables:\n");
  for (const auto& [option, variable] : ProfileOptionVariables()) {
    absl::StrAppend(&page, ".TP\n.B ", Troff(variable), "\nas \\fBcuscope profile ", Troff(option), "\\fR\n");
  }
  absl::StrAppend(&page,
                  ".TP\n"
                  ".B CUSCOPE_CONTROL\n"
                  "the control socket that \\fBcuscope status\\fR, \\fBcapture\\fR and \\fBps\\fR reach a process\n"
                  "through: on by default, 0 for none\n"
                  ".SH EXIT STATUS\n"
                  ".TP\n"
                  ".B 0\n"
                  "success\n"
                  ".TP\n"
                  ".B 1\n"
                  "a finding at least as severe as \\fB\\-\\-fail\\-on\\fR (\\fBanalyze\\fR), or a regression with\n"
                  "\\fB\\-\\-fail\\-on\\-regression\\fR (\\fBdiff\\fR)\n"
                  ".TP\n"
                  ".B 2\n"
                  "a usage or input error\n"
                  ".PP\n"
                  "\\fBcuscope profile\\fR exits with the profiled program's status (128 + the signal that ended it).\n"
                  ".SH SEE ALSO\n"
                  ".BR nsys (1),\n"
                  ".BR ncu (1)\n");
  return page;
}

int RunMan(const Args& args) {
  ArgumentParser parser;
  parser.UnknownOptionMessage(UnknownOptionOf("man"));
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kManUsage)) return *exit;
  std::fputs(ManPage(DescribeCommands()).c_str(), stdout);
  return 0;
}

}  // namespace cuscope::cli
