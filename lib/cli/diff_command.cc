// cuscope diff BASE NEW | BASE... -- NEW... | --base A,B --new C,D  [--format text|json] [--top N]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/cli/run_sets.h"
#include "lib/core/terminal_text.h"
#include "lib/report/diff.h"

namespace cuscope::cli {
namespace {

constexpr const char kDiffUsage[] =
    "usage: cuscope diff BASE NEW [options]\n"
    "       cuscope diff BASE1 BASE2... -- NEW1 NEW2... [options]\n"
    "       cuscope diff --base A,B,C --new D,E,F [options]\n"
    "\n"
    "Compares a baseline's trace(s) with a changed program's: end-to-end time, GPU busy share, kernel time by\n"
    "kernel, findings resolved and new, and one verdict on whether the change helped. With one run per side a\n"
    "change under --min-change is 'no clear change'; with 2 or more runs per side the verdict needs the\n"
    "difference of the means to beat run-to-run noise (Welch's t-test, 95%, two-sided).\n"
    "  --format text|json   text for people (default) or one JSON object\n"
    "  --top N              kernels to list (default 10; 0 = all)\n"
    "  --min-change PCT     one run per side: smallest change that counts (default 2)\n"
    CUSCOPE_SPAN_USAGE
    "  --fail-on-regression exit 1 when NEW is slower (a verdict of 'worse') or the runs cannot be compared,\n"
    "                       for CI gates\n" CUSCOPE_KERNEL_NAMES_USAGE;

}  // namespace

int RunDiff(const Args& args) {
  RunSetArgs sets;
  std::string format = "text";
  size_t top = 10;
  core::KernelNameStyle names = core::KernelNameStyle::kBase;
  report::DiffOptions options;
  bool fail_on_regression = false;
  ArgumentParser parser;
  AddRunSetArguments(&parser, &sets, UnknownOptionOf("diff"));
  parser.Option(
      {"--format"}, "--format takes text or json",
      KeepTextOrJson(&format),
      "text for people (default) or one JSON object");
  parser.Option(
      {"--top"}, "--top takes a number of kernels",
      [&](const std::string& v) {
        char* end = nullptr;
        top = std::strtoul(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0') return absl::InvalidArgumentError("--top takes a number of kernels");
        return absl::OkStatus();
      },
      "kernels to list (default 10; 0 = all)");
  parser.Option({"--kernel-names"}, "--kernel-names takes base, demangled or mangled", KeepKernelNameStyle(&names),
                "kernel names as shown: base (default), demangled or mangled (JSON and CSV keep the recorded names)");
  parser.Option(
      {"--min-change"}, "--min-change takes a percentage",
      [&](const std::string& v) {
        char* end = nullptr;
        const double pct = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(pct >= 0 && pct < 100))
          return absl::InvalidArgumentError("--min-change takes a percentage");
        options.min_change = pct / 100.0;
        return absl::OkStatus();
      },
      "one run per side: smallest change in percent that counts (default 2)");
  AddSpanArguments(&parser, &options);
  parser.Flag(
      {"--fail-on-regression"},
      [&] {
        fail_on_regression = true;
        return absl::OkStatus();
      },
      "exit 1 when NEW is slower or the runs cannot be compared (for CI gates)");
  if (std::optional<int> exit = HelpOrMistake(parser.Parse(args), kDiffUsage)) return *exit;
  absl::StatusOr<RunSets> resolved = ResolveRunSets(sets);
  if (!resolved.ok()) return PrintError(absl::StrCat("diff: ", resolved.status().message()));
  std::vector<report::RunFigures> base, next;
  if (absl::Status s = LoadRunSets(*resolved, &base, &next); !s.ok()) return PrintError(std::string(s.message()));
  const report::DiffResult diff = report::DiffRuns(base, next, options);
  if (format == "json") {
    std::printf("%s\n", report::RenderDiffJson(diff).c_str());
  } else {
    std::fputs(core::EscapeTextForTerminal(report::RenderDiffText(diff, top, names)).c_str(), stdout);
  }
  // A gate fails on a regression, and on runs it cannot compare: passing them would hide one.
  return fail_on_regression &&
                 (diff.verdict == report::Verdict::kWorse || diff.verdict == report::Verdict::kNotComparable)
             ? 1
             : 0;
}

}  // namespace cuscope::cli
