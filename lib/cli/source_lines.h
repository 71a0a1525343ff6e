// Native frames' source lines for the views (analyze, stats, report, export): read from the modules
// on this machine (lib/symbolize) after the trace is loaded, with one `cuscope:` line on stderr for
// what could not be read.
#ifndef CUSCOPE_LIB_CLI_SOURCE_LINES_H_
#define CUSCOPE_LIB_CLI_SOURCE_LINES_H_

#include "lib/core/dictionary.h"
#include "lib/core/trace.h"

namespace cuscope::cli {

// Resolves the launch stacks' native frames outside the CUDA libraries. CUSCOPE_SOURCE_LINES=0
// leaves every frame as recorded.
void AddSourceLines(core::Trace& trace);
// The same on a dictionary alone (export, which streams the records).
void AddSourceLines(core::Dictionary& dict);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_SOURCE_LINES_H_
