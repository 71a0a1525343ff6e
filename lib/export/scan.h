// The export's first pass: one streaming read of the trace that learns what the export must know
// before it writes anything, without keeping records.
//
// It holds: the time span; the devices, streams and host threads that have work (so every track
// is declared up front); the correlation ids of API calls and of GPU operations (about one bit per
// id, so that a flow arrow is written only when both of its ends are in the trace); the
// correlation ids of metric rows (few: the launches replayed for metrics); and the capture windows
// (few).
#ifndef CUSCOPE_LIB_EXPORT_SCAN_H_
#define CUSCOPE_LIB_EXPORT_SCAN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuscope/v1/trace.pb.h"
#include "absl/container/flat_hash_map.h"
#include "lib/analysis/launch_sites.h"
#include "lib/core/stuck_correlation.h"
#include "lib/core/trace_reader.h"
#include "lib/export/correlation_set.h"

namespace cuscope::exporter {

struct ThreadUse {
  uint32_t pid = 0;
  uint64_t tid = 0;
  bool api = false;
  bool nvtx = false;
  bool overhead = false;
};

struct ScanResult {
  v1::Header header;
  // Earliest and latest timestamp of any record or capture window; first_ns > last_ns when the
  // trace holds none.
  uint64_t first_ns = UINT64_MAX;
  uint64_t last_ns = 0;
  std::vector<uint32_t> devices;                       // with GPU work, ascending
  std::vector<std::pair<uint32_t, uint32_t>> streams;  // (device, stream), ascending
  std::map<uint32_t, ThreadUse> threads;               // by Dictionary thread id
  CorrelationSet api_correlations;
  CorrelationSet runtime_correlations;  // of runtime API calls (a driver call inside may share one)
  CorrelationSet gpu_correlations;
  std::vector<uint64_t> profiled_correlations;  // of metric rows; sorted, unique
  std::vector<v1::CaptureWindow> windows;       // in file order
  // The METRICS windows' spans (an open one ends at last_ns), sorted by start.
  std::vector<std::pair<uint64_t, uint64_t>> metric_spans;
  // A correlation id most kernels share (core/stuck_correlation.h): it ties nothing. The scan
  // votes; ConfirmStuckCorrelation counts the candidate in a second read.
  core::StuckCorrelationVote stuck_vote;
  std::optional<core::StuckCorrelation> stuck_correlation;
  // Call stacks (--stacks): each kernel's, and each stack's launch site as a slice argument says it.
  std::optional<analysis::LaunchStackIndex> stacks;
  absl::flat_hash_map<uint32_t, std::string> launch_site_text;  // by call stack id

  uint64_t chunks = 0;
  uint64_t kernels = 0, api_calls = 0, memcpys = 0, memsets = 0, nvtx_markers = 0, overheads = 0;
  uint64_t tail_bytes_dropped = 0;
  // Set when a block did not decode: the records before it are all there is.
  std::optional<absl::Status> corruption;

  bool empty() const { return first_ns > last_ns; }
  // Whether a metric row has this id (never the stuck one).
  bool Profiled(uint64_t correlation_id) const;
  // The timeline's own test (analysis::Timeline::Replayed), over what the scan saw.
  bool Replayed(const core::KernelRow& k) const {
    return core::IsReplayedLaunch(k, Profiled(k.correlation_id), stuck_correlation);
  }
};

// Reads `reader` to its end.
// `add_source_lines` (may be empty) is given a copy of the whole file's dictionary before the launch
// sites are named (ExportOptions::add_source_lines).
ScanResult Scan(core::TraceReader& reader, const std::function<void(core::Dictionary&)>& add_source_lines = {});

// When the scan's vote left a candidate (rare: ids that are all distinct end the vote with none or
// one vote left), reads `reader` (a fresh one on the same file) to its end to confirm it.
void ConfirmStuckCorrelation(core::TraceReader& reader, ScanResult* scan);

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_SCAN_H_
