// cuscope log add --change TEXT BASE NEW [--file F]   (or BASE... -- NEW..., --base/--new lists)
// cuscope log show [--file F]
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/run_sets.h"
#include "lib/core/terminal_text.h"
#include "lib/report/diff.h"
#include "lib/report/tuning_log.h"

namespace cuscope::cli {
namespace {

constexpr const char kLogUsage[] =
    "usage: cuscope log add --change TEXT BASE NEW [--file F]\n"
    "       cuscope log add --change TEXT BASE1 BASE2... -- NEW1 NEW2... [--file F]\n"
    "       cuscope log add --change TEXT --base A,B --new C,D [--file F]\n"
    "       cuscope log show [--file F]\n"
    "\n"
    "A tuning log in your project: 'add' compares the runs as cuscope diff does and appends one entry (date, the\n"
    "change, the time compared, GPU busy share, kernel time and top finding before and after, the verdict);\n"
    "'show' prints the log as a table.\n"
    "  --file F        the log (default ./cuscope_tuning_log.jsonl); a name ending in .md is kept as a Markdown\n"
    "                  table instead of JSON Lines\n"
    "  --change TEXT   what changed between BASE and NEW (required for add)\n"
    "add, as cuscope diff:\n" CUSCOPE_SPAN_USAGE;

int LogShow(const std::string& file) {
  if (report::IsMarkdownLog(file)) {
    // A Markdown log is already a table: print it as it is.
    std::ifstream in(file, std::ios::binary);
    if (!in) return PrintError(absl::StrCat(file, ": no such log (cuscope log add writes it)"));
    std::ostringstream text;
    text << in.rdbuf();
    std::fputs(core::EscapeTextForTerminal(text.str()).c_str(), stdout);
    return 0;
  }
  absl::StatusOr<std::vector<report::LogEntry>> entries = report::ReadJsonLog(file);
  if (!entries.ok()) return PrintError(std::string(entries.status().message()));
  std::printf("%s: %zu %s\n\n%s", core::EscapeForTerminal(file).c_str(), entries->size(),
              entries->size() == 1 ? "entry" : "entries",
              core::EscapeTextForTerminal(report::RenderLogTable(*entries)).c_str());
  return 0;
}

}  // namespace

int RunLog(const Args& args) {
  if (args.empty()) return PrintError("log: say add or show (see cuscope log --help)");
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kLogUsage, stdout);
    return 0;
  }
  const std::string action = args[0];
  if (action != "add" && action != "show") {
    return PrintError(absl::StrCat("log: unknown action '", action, "' (add or show)"));
  }
  std::string file = report::kDefaultLogFile, change;
  bool change_given = false;
  RunSetArgs sets;
  report::DiffOptions options;
  ArgumentParser parser;
  AddRunSetArguments(&parser, &sets, UnknownOptionOf("log"));
  AddSpanArguments(&parser, &options);
  parser.Option(
      {"--file", "-f"}, "--file takes a path",
      [&](const std::string& v) {
        file = v;
        return absl::OkStatus();
      },
      "the log (default ./cuscope_tuning_log.jsonl); a name ending in .md is kept as a Markdown table");
  parser.Option(
      {"--change", "-m"}, "--change takes a description of the change",
      [&](const std::string& v) {
        change = v;
        change_given = true;
        return absl::OkStatus();
      },
      "what changed between BASE and NEW (required for add)");
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args, 1), kLogUsage)) return *exit;
  if (action == "show") {
    if (!sets.before_separator.empty() || sets.separator || change_given || options.span != report::DiffSpan::kSteady) {
      return PrintError("log show takes only --file");
    }
    return LogShow(file);
  }
  if (!change_given || change.empty()) return PrintError("log add: say what changed with --change \"...\"");
  absl::StatusOr<RunSets> resolved = ResolveRunSets(sets);
  if (!resolved.ok()) return PrintError(absl::StrCat("log add: ", resolved.status().message()));
  std::vector<report::RunFigures> base, next;
  if (absl::Status s = LoadRunSets(*resolved, &base, &next); !s.ok()) return PrintError(std::string(s.message()));
  // The verdict is on the time cuscope diff compares (steady state by default); the entry says which.
  const report::DiffResult diff = report::DiffRuns(base, next, options);
  const report::LogEntry entry = report::MakeLogEntry(diff, base, next, change, absl::Now());
  if (absl::Status s = report::AppendLogEntry(file, entry); !s.ok()) return PrintError(std::string(s.message()));
  std::printf("cuscope: logged to %s: %s\n  %s\n", core::EscapeForTerminal(file).c_str(),
              core::EscapeForTerminal(change).c_str(), core::EscapeTextForTerminal(diff.conclusion).c_str());
  return 0;
}

}  // namespace cuscope::cli
