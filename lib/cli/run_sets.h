// The two sets of runs `cuscope diff` and `cuscope log add` compare, from their arguments:
//   BASE NEW                     one run each
//   BASE... -- NEW...            several runs each, separated by "--"
//   --base A,B,C --new D,E,F     the same as lists
#ifndef CUSCOPE_LIB_CLI_RUN_SETS_H_
#define CUSCOPE_LIB_CLI_RUN_SETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/cli/arguments.h"
#include "lib/report/diff.h"
#include "lib/report/run_figures.h"

namespace cuscope::cli {

struct RunSetArgs {
  std::vector<std::string> before_separator;  // positional arguments before "--" (all of them without one)
  std::vector<std::string> after_separator;
  bool separator = false;
  std::vector<std::string> base_list, new_list;  // from --base and --new
};

struct RunSets {
  std::vector<std::string> base, next;
};

// Teaches `parser` the run-set arguments, which fill *args: positional traces, one "--" between
// the sets (a second one is an unknown option, named by `unknown_option` like every other), and
// --base/--new lists.
void AddRunSetArguments(ArgumentParser* parser, RunSetArgs* args, ArgumentParser::Message unknown_option);

// Teaches `parser` --span steady|all and --nvtx RANGE (one or the other), which set the span of
// *options: the time compared.
void AddSpanArguments(ArgumentParser* parser, report::DiffOptions* options);
// Their usage lines.
#define CUSCOPE_SPAN_USAGE                                                                                      \
  "  --span steady|all    the time compared: steady state, start-up left out (default; the start-up is the\n" \
  "                       first 1% of each GPU's operations, as analyze separates it), or all of it, first\n"  \
  "                       to last recorded activity\n"                                                         \
  "  --nvtx RANGE         compare the mean length of the NVTX ranges named RANGE (a step, a request)\n"

absl::StatusOr<RunSets> ResolveRunSets(const RunSetArgs& args);
// Loads and analyzes every trace of both sets (a truncated trace is a warning on stderr).
absl::Status LoadRunSets(const RunSets& sets, std::vector<report::RunFigures>* base,
                         std::vector<report::RunFigures>* next);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_RUN_SETS_H_
