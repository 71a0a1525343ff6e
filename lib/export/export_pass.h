// The export's second pass (exporter.h): the scan's tracks declared, then every chunk's records
// written to the sink as slices, instants, flows and counters. Internal to lib/export: the pass
// itself in export_pass.cc (tracks, lanes, windows, findings, the run), its per-record writers in
// export_records.cc.
#ifndef CUSCOPE_LIB_EXPORT_EXPORT_PASS_H_
#define CUSCOPE_LIB_EXPORT_EXPORT_PASS_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/analysis/finding.h"
#include "lib/core/dictionary.h"
#include "lib/core/trace_reader.h"
#include "lib/export/exporter.h"
#include "lib/export/lane_allocator.h"
#include "lib/export/nvtx_range_pairing.h"
#include "lib/export/scan.h"
#include "lib/export/track_ids.h"
#include "lib/export/utilization.h"

namespace cuscope::exporter {

// A slice track and its overflow lanes.
struct SliceTrack {
  uint64_t id = 0;
  uint64_t lane_parent = 0;  // parent of the overflow tracks
  std::string lane_prefix;   // "Stream 7" -> "Stream 7 (overlap 1)"
  int32_t order = 0;
  LaneAllocator lanes;
  int declared_lanes = 1;  // lane 0 is the track itself
};

struct GpuOp {
  uint64_t start;
  uint64_t end;
  uint64_t track;
  uint32_t index;
  uint8_t kind;           // 0 kernel, 1 memcpy, 2 memset
  bool replayed = false;  // a kernel replayed for metrics: tested once per kernel
};

struct ClosedRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t name = 0;
  uint32_t domain = 0;
  uint32_t thread = 0;
};

// Text for a kernel signature, made once.
struct SignatureText {
  bool ready = false;
  std::string name;           // the short base name (core::ShortKernelName)
  std::string replayed_name;  // "name [metrics replay]"
  std::string grid;
  std::string block;
  uint32_t grid_id = 0;  // dims_ ids: kernels of one shape share the interned text
  uint32_t block_id = 0;
};

struct FunctionText {
  bool ready = false;
  std::string name;  // display name, no _vNNNN
  bool driver = false;
};

// Slices handed over in end order (inner before outer, as CUPTI delivers records) nest on the
// fewest lanes.
template <typename T>
void SortByEnd(std::vector<T>* items) {
  auto before = [](const T& a, const T& b) { return a.end != b.end ? a.end < b.end : a.start > b.start; };
  if (!std::is_sorted(items->begin(), items->end(), before)) std::stable_sort(items->begin(), items->end(), before);
}

class ExportPass {
 public:
  ExportPass(const ScanResult& scan, const std::vector<analysis::Finding>& findings, EventSink* sink,
             Utilization utilization, ExportSummary* summary)
      : scan_(scan), findings_(findings), sink_(sink), utilization_(std::move(utilization)), summary_(summary) {}

  absl::Status Run(core::TraceReader& reader, const std::string& path);

 private:
  absl::Status DeclareTracks();
  absl::Status Declare(Track track);
  SliceTrack& AddSliceTrack(uint64_t id, uint64_t lane_parent, std::string lane_prefix, int32_t order);
  // The state of a declared slice track; null for one the scan did not see.
  SliceTrack* State(uint64_t id);
  // Places a slice on its track or an overflow lane; returns the track id to use, or 0 when the
  // slice fits no lane. Declares the lane track on first use.
  absl::StatusOr<uint64_t> Place(uint64_t track, uint64_t start, uint64_t end);
  absl::Status Emit(Slice slice);

  absl::Status ExportWindows();
  absl::Status ExportFindings();
  absl::Status ExportChunk(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportGpu(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  // `op` is the kernel's entry in ops_: its track, span and whether it was replayed.
  absl::Status ExportKernel(const core::KernelRow& k, const GpuOp& op, const core::Dictionary& dict);
  absl::Status ExportApi(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportNvtx(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportRange(const ClosedRange& range, const core::Dictionary& dict, bool unterminated);
  absl::Status ExportOverheads(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportUtilization();

  const SignatureText& Signature(uint32_t id, const core::Dictionary& dict);
  const FunctionText& Function(uint32_t id, const core::Dictionary& dict);
  bool Replayed(const core::KernelRow& k) const { return scan_.Replayed(k); }
  // Where a kernel ran: its record's span; for a replayed launch whose record has no duration (CUPTI
  // gives the passes none), the METRICS window it starts, during which its passes ran serialized.
  std::pair<uint64_t, uint64_t> KernelSpan(const core::KernelRow& k, bool replayed) const;
  // The flow id that ends at a GPU operation: its correlation id when the call that issued it is in
  // the trace. The nodes of one graph launch share the launch's id; a flow has one end, so only the
  // first node written gets it.
  uint64_t FlowIn(uint64_t correlation, bool graph_node) {
    if (correlation == 0 || !scan_.api_correlations.Contains(correlation)) return 0;
    if (graph_node && !graph_flows_.insert(correlation).second) return 0;
    return correlation;
  }

  const ScanResult& scan_;
  const std::vector<analysis::Finding>& findings_;
  EventSink* sink_;
  Utilization utilization_;
  ExportSummary* summary_;

  absl::flat_hash_map<uint64_t, size_t> track_index_;
  std::deque<SliceTrack> tracks_;
  uint64_t last_track_id_ = 0;
  SliceTrack* last_track_ = nullptr;

  std::deque<SignatureText> signatures_;             // by signature id (a deque: references stay valid)
  std::deque<FunctionText> functions_;               // by function id
  absl::flat_hash_map<std::string, uint32_t> dims_;  // distinct launch dimension texts
  NvtxRangePairing nvtx_pairing_;
  absl::flat_hash_set<uint64_t> graph_flows_;                                // graph launches whose flow has its end

  // Scratch reused from chunk to chunk.
  std::vector<GpuOp> ops_;
  std::vector<uint32_t> order_;
  std::vector<ClosedRange> ranges_;
  std::vector<Arg> args_;
  absl::flat_hash_map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> busy_;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_EXPORT_PASS_H_
