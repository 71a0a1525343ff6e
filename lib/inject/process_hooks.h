// Process-level wiring shared by every way in: one start per process, the flush at exit, and
// fork handling.
#ifndef CUSCOPE_LIB_INJECT_PROCESS_HOOKS_H_
#define CUSCOPE_LIB_INJECT_PROCESS_HOOKS_H_

#include <string>

#include "absl/status/status.h"
#include "lib/settings/config.h"

namespace cuscope::inject {

// Reads CUSCOPE_* and starts the collector, once per process whichever entry calls first.
// Failures print one `cuscope:` line and leave profiling off.
void StartFromEnvironmentOnce(const char* entry);

// Starts with an explicit configuration (Session, C API). Registers the exit and fork hooks.
absl::Status StartWithConfig(const settings::Config& config, const char* entry);

// Whether the session started last asked for quiet (CUSCOPE_QUIET, SessionOptions::quiet).
bool SessionQuiet();

// Stops and prints the one-line summary (unless quiet).
absl::Status StopAndReport(bool quiet);

// Points NVTX at CUPTI when the user has not chosen an NVTX tool, so ranges reach the trace.
void RouteNvtxToCupti();

// Prints "cuscope: <message>" on stderr.
void PrintLine(const std::string& message);

}  // namespace cuscope::inject

#endif  // CUSCOPE_LIB_INJECT_PROCESS_HOOKS_H_
