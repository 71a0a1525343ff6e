// cuscope diff BASE NEW | BASE... -- NEW... | --base A,B --new C,D  [--format text|json] [--top N]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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
    "  --min-change PCT     one run per side: smallest end-to-end change that counts (default 2)\n";

int DiffError(const std::string& message) {
  std::fprintf(stderr, "cuscope: %s\n", core::EscapeTextForTerminal(message).c_str());
  return 2;
}

}  // namespace

int RunDiff(const Args& args) {
  RunSetArgs sets;
  std::string format = "text";
  size_t top = 10;
  report::DiffOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool has_value = i + 1 < args.size();
    if (arg == "--" && !sets.separator) {
      sets.separator = true;
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kDiffUsage, stdout);
      return 0;
    } else if (arg == "--format") {
      if (!has_value || (args[i + 1] != "text" && args[i + 1] != "json"))
        return DiffError("--format takes text or json");
      format = args[++i];
    } else if (arg == "--top") {
      char* end = nullptr;
      const std::string& v = has_value ? args[++i] : std::string();
      top = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') return DiffError("--top takes a number of kernels");
    } else if (arg == "--min-change") {
      char* end = nullptr;
      const std::string& v = has_value ? args[++i] : std::string();
      const double pct = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(pct >= 0 && pct < 100)) return DiffError("--min-change takes a percentage");
      options.min_change = pct / 100.0;
    } else if (arg == "--base" || arg == "--new") {
      if (!has_value) return DiffError(absl::StrCat(arg, " takes TRACE[,TRACE...]"));
      for (absl::string_view p : absl::StrSplit(args[++i], ',', absl::SkipEmpty())) {
        (arg == "--base" ? sets.base_list : sets.new_list).emplace_back(p);
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return DiffError(absl::StrCat("diff: unknown option '", arg, "' (see cuscope diff --help)"));
    } else {
      (sets.separator ? sets.after_separator : sets.before_separator).push_back(arg);
    }
  }
  absl::StatusOr<RunSets> resolved = ResolveRunSets(sets);
  if (!resolved.ok()) return DiffError(absl::StrCat("diff: ", resolved.status().message()));
  std::vector<report::RunFigures> base, next;
  if (absl::Status s = LoadRunSets(*resolved, &base, &next); !s.ok()) return DiffError(std::string(s.message()));
  const report::DiffResult diff = report::DiffRuns(base, next, options);
  if (format == "json") {
    std::printf("%s\n", report::RenderDiffJson(diff).c_str());
  } else {
    std::fputs(core::EscapeTextForTerminal(report::RenderDiffText(diff, top)).c_str(), stdout);
  }
  return 0;
}

}  // namespace cuscope::cli
