// The options of the commands that read a job's rank traces together (`analyze` and `report` with
// several traces): --step NAME and -j N, parsed alike for both.
#ifndef CUSCOPE_LIB_CLI_RANK_SET_OPTIONS_H_
#define CUSCOPE_LIB_CLI_RANK_SET_OPTIONS_H_

#include "lib/cli/arguments.h"
#include "lib/ranks/rank_traces.h"

namespace cuscope::cli {

// Usage lines for the two options, as the commands' help prints them (a literal, to be joined to
// the command's own).
#define CUSCOPE_RANK_SET_OPTIONS_USAGE                                                                   \
  "  --step NAME          the NVTX range that marks a step (default: the most repeated outermost range)\n" \
  "  -j N                 traces read at once (default: the cores, at most 8; each holds one trace)\n"

// Adds --step and -j (--jobs) to `parser`, writing into `options`.
void AddRankSetOptions(ArgumentParser& parser, ranks::RankTracesOptions* options);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_RANK_SET_OPTIONS_H_
