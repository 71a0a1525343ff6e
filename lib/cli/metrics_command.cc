// `cuscope metrics [LIST]`: the metric sets and the ncu metric names behind them, so a user can
// see what --metrics will collect and ask ncu for the same names.
#include <cstdio>

#include "absl/strings/str_join.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/core/metric_sets.h"

namespace cuscope::cli {

int RunMetrics(const Args& args) {
  bool csv = false;
  std::string list;
  ArgumentParser parser;
  parser.HelpOnlyAsFirstArgument().UnknownOptionsArePositional();
  parser.Flag(
      {"--csv"},
      [&] {
        csv = true;
        return absl::OkStatus();
      },
      "LIST's metric names on one comma-separated line (for ncu --metrics)");
  parser.Positional(KeepOne(&list, "one LIST only"));
  absl::StatusOr<ParsedArguments> parsed = parser.Parse(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "cuscope metrics: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (parsed->help) {
    std::printf(
        "usage: cuscope metrics [LIST]\n"
        "\n"
        "Without LIST: every metric set and its metrics. With LIST (sets and metric names,\n"
        "comma-separated, as --metrics takes it): the metric names it expands to, one per line.\n"
        "  --csv    LIST's metric names on one comma-separated line (for ncu --metrics)\n");
    return 0;
  }
  if (list.empty()) {
    for (const auto& set : core::MetricSetNames()) {
      std::printf("%s\n", set.c_str());
      for (const auto& m : core::MetricSet(set)) std::printf("  %s\n", m.c_str());
    }
    return 0;
  }
  auto names = core::ExpandMetricList(list);
  if (!names.ok()) {
    std::fprintf(stderr, "cuscope metrics: %s\n", std::string(names.status().message()).c_str());
    return 2;
  }
  if (csv) {
    std::printf("%s\n", absl::StrJoin(*names, ",").c_str());
  } else {
    for (const auto& m : *names) std::printf("%s\n", m.c_str());
  }
  return 0;
}

}  // namespace cuscope::cli
