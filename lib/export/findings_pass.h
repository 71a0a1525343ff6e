// The analysis pass of an export: the findings of `cuscope analyze`, whose spans the export draws
// on its "cuscope findings" track.
//
// The analyzer works on a whole trace, so this pass loads it (core::LoadTrace) and runs
// analysis::Analyze on it: while it runs it holds every decoded record of the trace (40 to 48 B
// per kernel or API call row) plus the analyzer's own peak (about 20 B per record), as `cuscope
// analyze` does: about 70 B per record in all (141 MiB for 1M launches with their calls,
// bench/export_bench.cc). Only the findings outlive it; the export pass that follows reads the
// trace again chunk by chunk. An export without findings skips this pass and never holds more
// than one chunk.
#ifndef CUSCOPE_LIB_EXPORT_FINDINGS_PASS_H_
#define CUSCOPE_LIB_EXPORT_FINDINGS_PASS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/analysis/finding.h"

namespace cuscope::exporter {

// The ranked findings of the trace at `path`, as `cuscope analyze` reports them with default
// thresholds. Fails when the file is not a readable trace.
absl::StatusOr<std::vector<analysis::Finding>> RunFindingsPass(const std::string& path);

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_FINDINGS_PASS_H_
