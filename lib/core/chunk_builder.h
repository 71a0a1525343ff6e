// Builds trace chunks from activities: interns strings, kernel signatures, API functions and host
// threads file-wide, fixes each chunk's base time, and hands each record to its kind's encoder
// (lib/core/record_codec/, where each kind's fields are written and read back).
//
// One builder serves one trace file and is used by one thread (the writer thread).
#ifndef CUSCOPE_LIB_CORE_CHUNK_BUILDER_H_
#define CUSCOPE_LIB_CORE_CHUNK_BUILDER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/core/kernel_selection.h"
#include "lib/core/record_codec/api_call.h"
#include "lib/core/record_codec/kernel.h"
#include "lib/core/records.h"

namespace cuscope::core {

// Gives the name of a runtime or driver API function; called once per distinct function.
using ApiNameResolver = std::function<std::string(v1::ApiDomain domain, uint32_t callback_id)>;

class ChunkBuilder final : public ActivitySink {
 public:
  explicit ChunkBuilder(ApiNameResolver api_names);

  void Add(const KernelActivity& a) override;
  void Add(const ApiActivity& a) override;
  void Add(const MemcpyRecord& r) override;
  void Add(const MemsetRecord& r) override;
  void Add(const SyncRecord& r) override;
  void Add(const NvtxActivity& a) override;
  void Add(const MemoryOpRecord& r) override;
  void Add(const OverheadActivity& a) override;
  void Add(const RequestScopeActivity& r) override;
  // An annotation of a marker (the trace's record counts leave it out).
  void Add(const NvtxPayloadRecord& p) override;
  void AddUntranslated(uint32_t cupti_kind) override { ++untranslated_; }
  void AddIncomplete(uint32_t cupti_kind) override { ++incomplete_; }

  // Metric values of one profiled launch, with its grid and block when known.
  void AddKernelMetrics(uint64_t correlation_id, uint32_t device, std::string_view kernel_name, uint32_t pass_count,
                        v1::ReplayMode replay_mode, const std::vector<std::pair<std::string, double>>& values,
                        const LaunchShape* shape = nullptr);
  void AddWindow(v1::WindowKind kind, uint64_t start_ns, uint64_t end_ns, std::string_view reason);

  // Samples of one GPU counter, in time order (the samplers name the point type through here).
  using CounterPoint = core::CounterPoint;
  void AddCounterSeries(uint32_t device, v1::CounterSource source, std::string_view name,
                        const std::vector<CounterPoint>& points);

  // The hot kernels the top-down chose at `time_ns`, hottest first.
  void AddTopDownSelection(uint64_t time_ns, uint64_t window_kernel_ns, const std::vector<HotKernelChoice>& kernels);

  // Kernel GPU time per signature, for the top-down's choice. Off until enabled; replayed launches
  // are never counted.
  void EnableKernelTotals() { kernel_totals_on_ = true; }
  // The totals so far, one per signature (SelectHotKernels merges the same name and shape).
  std::vector<HotKernelChoice> KernelTotals() const;
  uint64_t total_kernel_ns() const { return total_kernel_ns_; }
  // Forgets the totals so far (a monitor-mode capture chooses among its own window's kernels).
  void ResetKernelTotals() {
    signature_totals_.clear();
    total_kernel_ns_ = 0;
  }

  // Monitor mode: one closed interval's figures, filled by the caller (lib/core/record_codec/monitor_interval.h)
  // with string ids from InternString.
  v1::MonitorInterval* AddMonitorInterval() {
    ++pending_;
    return chunk_.add_monitor_intervals();
  }

  // Records added since the last TakeChunk (untranslated ones not counted).
  uint64_t pending_records() const { return pending_; }
  uint64_t untranslated_records() const { return untranslated_; }
  uint64_t incomplete_records() const { return incomplete_; }
  // Sum of the durations of CUPTI's overhead records added so far (all chunks).
  uint64_t overhead_ns() const { return overhead_ns_; }

  // Moves the chunk built so far into `out` (cleared first), with the next sequence number, and
  // starts a new one. Interned definitions stay known: later chunks refer to them by id.
  void TakeChunk(v1::Chunk* out);

  // Interns a string, returning its file-wide id (>= 1; the empty string is 0).
  uint32_t InternString(std::string_view s);

  // Call stacks of sampled launches. A frame: a return address's module (path), its offset there,
  // and the symbol around it (empty when none was found), and the module's GNU build id (raw bytes;
  // empty when it has none); a stack: frame ids, innermost first.
  uint32_t InternFrame(std::string_view module, uint64_t module_offset, std::string_view function,
                       uint64_t function_offset, std::string_view build_id = {});
  // A Python frame: its source file, qualified name and line.
  uint32_t InternPythonFrame(std::string_view file, std::string_view function, uint32_t line);
  uint32_t InternStack(const std::vector<uint32_t>& frames);  // frames from InternFrame, not empty
  void AddLaunchStack(uint64_t correlation_id, uint32_t stack);
  // A graph node created with a stack (at `created_ns` on host thread `tid` of `pid`, when known),
  // or cloned from `original_node_id` (stack 0).
  void AddGraphNode(uint64_t node_id, uint32_t stack, uint64_t original_node_id, uint64_t created_ns = 0,
                    uint32_t pid = 0, uint64_t tid = 0);

 private:
  uint32_t InternSignature(const KernelConfig& c);
  uint32_t InternFunction(v1::ApiDomain domain, uint32_t callback_id);
  uint32_t InternThread(uint32_t pid, uint64_t tid);
  // The chunk's base time: the time of its first record, here `t` when this record is the first.
  uint64_t BaseTime(uint64_t t);

  ApiNameResolver api_names_;
  absl::flat_hash_map<std::string, uint32_t> strings_;
  // Kernel names arrive as the same CUPTI-owned pointer launch after launch; looking the pointer
  // up and comparing the text is cheaper than hashing a long mangled name. Texts by id, stable.
  absl::flat_hash_map<const char*, uint32_t> strings_by_pointer_;
  std::deque<std::string> string_texts_;
  absl::flat_hash_map<KernelSignatureKey, uint32_t> signatures_;
  absl::flat_hash_map<uint64_t, uint32_t> functions_;  // domain << 32 | callback id
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, uint32_t> threads_;
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, uint32_t> frames_;  // (module id, offset)
  absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> python_frames_;  // (file, function, line)
  uint32_t frame_count_ = 0;
  absl::flat_hash_map<std::vector<uint32_t>, uint32_t> stacks_;

  v1::Chunk chunk_;
  bool have_base_ = false;
  uint64_t base_time_ = 0;
  uint64_t sequence_ = 0;
  uint64_t pending_ = 0;
  uint64_t untranslated_ = 0;
  uint64_t incomplete_ = 0;
  KernelColumnEncoder kernel_columns_;
  ApiCallColumnEncoder api_call_columns_;
  uint64_t overhead_ns_ = 0;
  // Top-down: per signature id (index id - 1), its kernel time and launches; names and shapes
  // from the signature as interned.
  struct SignatureTotal {
    uint32_t name = 0;  // string id
    uint32_t device = 0;
    LaunchShape shape;
    uint64_t ns = 0;
    uint64_t launches = 0;
  };
  bool kernel_totals_on_ = false;
  std::vector<SignatureTotal> signature_totals_;
  uint64_t total_kernel_ns_ = 0;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_CHUNK_BUILDER_H_
