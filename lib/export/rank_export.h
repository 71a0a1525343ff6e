// `cuscope export rank_0.cuscope rank_1.cuscope ... -o job.pftrace`: the traces of a job's ranks in
// one timeline, a process per rank on one clock.
//
// Each trace is exported as alone (exporter.h: its GPUs, streams, threads, NVTX, flows, its own
// findings) into one writer through an adapter that places its timestamps on the wall clock
// (ranks/clock_alignment.h: the trace's clock references), names its top-level tracks after the
// rank ("rank 3 · GPU 0: NVIDIA H100 ...", "rank 3 · python3"), and keeps its tracks, flows and
// interned names apart from the other traces'. A process id two traces share (two hosts) gets a
// synthetic one in the second.
#ifndef CUSCOPE_LIB_EXPORT_RANK_EXPORT_H_
#define CUSCOPE_LIB_EXPORT_RANK_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/export/exporter.h"

namespace cuscope::exporter {

// The output is bounded by the inputs' total size (core::TraceOutputBound) and removed on failure.
// A trace that cannot be read fails the export, naming it.
absl::StatusOr<ExportSummary> ExportRanksToFile(const std::vector<std::string>& trace_paths,
                                                const std::string& output_path, const ExportOptions& options);

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_RANK_EXPORT_H_
