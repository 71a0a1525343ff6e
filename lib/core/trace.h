// A whole trace in memory: what `cuscope analyze`, `stats` and `dump` work on.
#ifndef CUSCOPE_LIB_CORE_TRACE_H_
#define CUSCOPE_LIB_CORE_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/dictionary.h"
#include "lib/core/records.h"

namespace cuscope::core {

struct Trace : RecordRows {
  v1::Header header;
  Dictionary dict;
  std::vector<v1::CaptureWindow> windows;
  // The choices of the one-run top-down, in order (one per timeline window that closed).
  std::vector<v1::TopDownSelection> top_down;
  // Monitor mode's figures, oldest first, as written (lib/core/record_codec/monitor_interval.h decodes them).
  std::vector<v1::MonitorInterval> monitor_intervals;
  // The last chunk's running totals: the session's, if it ended cleanly.
  std::optional<v1::CaptureStats> stats;
  // CUPTI's clock and the wall clock read together, after the header's, oldest first.
  std::vector<v1::ClockReference> clock_references;

  // How the read went.
  uint64_t chunks = 0;
  uint64_t bytes_read = 0;
  uint64_t tail_bytes_dropped = 0;
  // Set when a block in the middle did not decode: everything before it is kept.
  std::optional<absl::Status> corruption;

  bool truncated() const { return tail_bytes_dropped > 0 || corruption.has_value(); }
};

// Reads a whole trace. Fails only when the file cannot be opened or is not a trace (or of a newer
// version); a cut or damaged tail is reported in the result.
absl::StatusOr<Trace> LoadTrace(const std::string& path);
absl::StatusOr<Trace> LoadTraceFromBytes(std::string bytes);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_TRACE_H_
