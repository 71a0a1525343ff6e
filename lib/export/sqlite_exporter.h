// `cuscope export --format sqlite`: a trace as an SQLite database that SQL, pandas and scripts
// written for nsys's SQLite export read (the tables: sqlite_schema.h).
//
// The exporter loads the whole trace (core::LoadTrace) and builds its timeline as `cuscope stats`
// does, so that each table holds what the command's reports count: CUPTI_ACTIVITY_KIND_KERNEL has
// the launches on the timeline, CUSCOPE_KERNEL_REPLAYS the launches CUPTI replayed to collect
// metrics (timeline.h Replayed), API names are shown as the reports show them (no _vNNNN), kernel
// names in the three styles of --kernel-names (demangledName, shortName, mangledName as recorded).
// A row whose end precedes its start is written with end = start (an empty span, as every command
// reads it). With findings on (the default) the analyzer runs too and its findings fill the
// CUSCOPE_FINDING* tables. The database is built in a scratch file beside the output and put in
// place only when complete (core::ScratchFile).
#ifndef CUSCOPE_LIB_EXPORT_SQLITE_EXPORTER_H_
#define CUSCOPE_LIB_EXPORT_SQLITE_EXPORTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/analysis/finding.h"
#include "lib/core/dictionary.h"
#include "lib/core/trace.h"

namespace cuscope::exporter {

struct SqliteExportOptions {
  bool findings = true;
  bool overwrite = false;
  // Given the trace's dictionary before stacks are written: adds the CLI's native source lines.
  std::function<void(core::Dictionary&)> add_source_lines;
};

struct SqliteExportSummary {
  uint64_t kernels = 0;           // on the timeline
  uint64_t replayed_kernels = 0;  // CUSCOPE_KERNEL_REPLAYS
  uint64_t api_calls = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t synchronizations = 0;
  uint64_t nvtx_ranges = 0;
  uint64_t nvtx_marks = 0;
  uint64_t findings = 0;
  uint64_t strings = 0;
  uint64_t bytes_written = 0;
  std::vector<std::string> warnings;
};

// Writes the trace at `trace_path` as a database at `output`.
absl::StatusOr<SqliteExportSummary> ExportToSqlite(const std::string& trace_path, const std::string& output,
                                                   const SqliteExportOptions& options);

// The same for a trace already in memory (tests, and a reader that loaded it): `findings` (may be
// empty) fill the findings tables; `source_name` goes into META_DATA_EXPORT.
absl::StatusOr<SqliteExportSummary> WriteSqlite(const core::Trace& trace, const std::vector<analysis::Finding>& findings,
                                                const std::string& source_name, const std::string& output,
                                                bool overwrite);

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_SQLITE_EXPORTER_H_
