// Builds trace chunks from activities: interns strings, kernel signatures, API functions and host
// threads file-wide, and stores kernels and API calls as delta-encoded columns.
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

#include "absl/container/flat_hash_map.h"
#include "cuscope/v1/trace.pb.h"
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
  void AddUntranslated(uint32_t cupti_kind) override { ++untranslated_; }
  void AddIncomplete(uint32_t cupti_kind) override { ++incomplete_; }

  // Metric values of one profiled launch.
  void AddKernelMetrics(uint64_t correlation_id, uint32_t device, std::string_view kernel_name, uint32_t pass_count,
                        v1::ReplayMode replay_mode, const std::vector<std::pair<std::string, double>>& values);
  void AddWindow(v1::WindowKind kind, uint64_t start_ns, uint64_t end_ns, std::string_view reason);

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

 private:
  struct SignatureKey {
    uint32_t name;
    uint32_t device, context;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    uint32_t registers;
    int32_t static_smem, dynamic_smem;
    uint32_t local_mem;
    int32_t launch_type;
    uint32_t cluster_x, cluster_y, cluster_z, smem_executed;
    bool device_launched;
    template <typename H>
    friend H AbslHashValue(H h, const SignatureKey& k) {
      return H::combine(std::move(h), k.name, k.device, k.context, k.grid_x, k.grid_y, k.grid_z, k.block_x,
                        k.block_y, k.block_z, k.registers, k.static_smem, k.dynamic_smem, k.local_mem, k.launch_type,
                        k.cluster_x, k.cluster_y, k.cluster_z, k.smem_executed, k.device_launched);
    }
    friend bool operator==(const SignatureKey&, const SignatureKey&) = default;
  };

  uint32_t InternSignature(const KernelConfig& c);
  uint32_t InternFunction(v1::ApiDomain domain, uint32_t callback_id);
  uint32_t InternThread(uint32_t pid, uint64_t tid);
  // Offset of an absolute timestamp from the chunk's base time (fixed by the first record).
  int64_t Relative(uint64_t t);

  ApiNameResolver api_names_;
  absl::flat_hash_map<std::string, uint32_t> strings_;
  // Kernel names arrive as the same CUPTI-owned pointer launch after launch; looking the pointer
  // up and comparing the text is cheaper than hashing a long mangled name. Texts by id, stable.
  absl::flat_hash_map<const char*, uint32_t> strings_by_pointer_;
  std::deque<std::string> string_texts_;
  absl::flat_hash_map<SignatureKey, uint32_t> signatures_;
  absl::flat_hash_map<uint64_t, uint32_t> functions_;  // domain << 32 | callback id
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, uint32_t> threads_;

  v1::Chunk chunk_;
  bool have_base_ = false;
  uint64_t base_time_ = 0;
  uint64_t sequence_ = 0;
  uint64_t pending_ = 0;
  uint64_t untranslated_ = 0;
  uint64_t incomplete_ = 0;
  // Column state: the previous row's values, for delta encoding.
  uint64_t kernel_prev_start_ = 0, kernel_prev_corr_ = 0, kernel_rows_ = 0;
  uint64_t api_prev_start_ = 0, api_prev_corr_ = 0, api_rows_ = 0;
  uint64_t overhead_ns_ = 0;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_CHUNK_BUILDER_H_
