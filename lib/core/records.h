// Plain records of what the GPU and the host did, with absolute CUPTI timestamps (ns).
//
// Two families live here:
//   * activities: what the collector hands to the chunk builder, with names still as strings and
//     threads as (pid, tid). Translation from CUPTI structs produces these.
//   * decoded rows: what the trace reader gives back, with names and threads as file-wide ids that
//     resolve through `Dictionary`.
// Records that have no interned fields (copies, memsets, synchronization, memory operations) are
// the same in both families.
// How each kind is written to a trace and read back (its encoder and decoder, side by side):
// lib/core/record_codec/<kind>.h.
#ifndef CUSCOPE_LIB_CORE_RECORDS_H_
#define CUSCOPE_LIB_CORE_RECORDS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cuscope/v1/trace.pb.h"

namespace cuscope::core {

// ---- Records shared by both families -------------------------------------------------------

struct MemcpyRecord {
  uint64_t start = 0;
  uint64_t end = 0;
  v1::CopyKind copy_kind = v1::COPY_KIND_UNKNOWN;
  v1::MemoryKind src_kind = v1::MEMORY_KIND_UNKNOWN;
  v1::MemoryKind dst_kind = v1::MEMORY_KIND_UNKNOWN;
  uint64_t bytes = 0;
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint64_t correlation_id = 0;
  bool async = false;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};

struct MemsetRecord {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t bytes = 0;
  uint32_t value = 0;
  v1::MemoryKind memory_kind = v1::MEMORY_KIND_UNKNOWN;
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint64_t correlation_id = 0;
  bool async = false;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};

// Stream id used by synchronization records that are not about one stream.
inline constexpr uint32_t kNoStream = 0xffffffffu;

struct SyncRecord {
  uint64_t start = 0;
  uint64_t end = 0;
  v1::SyncType type = v1::SYNC_TYPE_UNKNOWN;
  uint32_t context = 0;
  uint32_t stream = kNoStream;
  uint32_t event = 0;
  uint64_t correlation_id = 0;
};

struct MemoryOpRecord {
  uint64_t time = 0;
  v1::MemoryOperationType type = v1::MEMORY_OPERATION_UNKNOWN;
  v1::MemoryKind memory_kind = v1::MEMORY_KIND_UNKNOWN;
  uint64_t bytes = 0;
  uint64_t address = 0;
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint64_t correlation_id = 0;
  bool async = false;
};

// ---- Activities (collector side) ------------------------------------------------------------

// A kernel's launch configuration: everything that repeats from launch to launch.
struct KernelConfig {
  std::string_view name;
  uint32_t device = 0;
  uint32_t context = 0;
  int32_t grid_x = 1, grid_y = 1, grid_z = 1;
  int32_t block_x = 1, block_y = 1, block_z = 1;
  uint32_t registers_per_thread = 0;
  int32_t static_shared_memory = 0;
  int32_t dynamic_shared_memory = 0;
  uint32_t local_memory_per_thread = 0;
  v1::LaunchType launch_type = v1::LAUNCH_TYPE_REGULAR;
  uint32_t cluster_x = 0, cluster_y = 0, cluster_z = 0;
  uint32_t shared_memory_executed = 0;
  bool device_launched = false;
};

struct KernelActivity {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t correlation_id = 0;
  uint32_t stream = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  uint32_t flags = 0;  // v1::KernelFlag bits
  // When the host queued the launch into the command buffer (inside the launch call; CUPTI's
  // latency timestamps), 0 when not recorded.
  uint64_t queued = 0;
  KernelConfig config;
};

struct ApiActivity {
  uint64_t start = 0;
  uint64_t end = 0;
  v1::ApiDomain domain = v1::API_DOMAIN_UNKNOWN;
  uint32_t callback_id = 0;
  uint32_t pid = 0;
  uint64_t tid = 0;
  uint64_t correlation_id = 0;
  uint32_t return_code = 0;
};

struct NvtxActivity {
  uint64_t time = 0;
  v1::NvtxKind kind = v1::NVTX_KIND_UNKNOWN;
  uint64_t id = 0;
  uint32_t pid = 0;
  uint64_t tid = 0;
  std::string_view name;
  std::string_view domain;
};

// The payload of an NVTX marker (CUPTI's marker data), by the marker's id. Scalars keep their 64
// bits; an extended payload its schema id and at most kMaxNvtxPayloadBytes of its data.
inline constexpr size_t kMaxNvtxPayloadBytes = 4096;
struct NvtxPayloadRecord {
  uint64_t id = 0;
  v1::NvtxPayloadKind kind = v1::NVTX_PAYLOAD_KIND_UNKNOWN;
  uint64_t bits = 0;
  uint64_t schema_id = 0;
  std::string data;
};

struct OverheadActivity {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string_view kind;
  uint32_t pid = 0;
  uint64_t tid = 0;
  uint64_t correlation_id = 0;
};

// A request scope (include/cuscope/request.h), written at its end: a request's span on one host
// thread, or a batch's, whose CUDA calls on that thread belong to it. `batch_requests` points at
// `batch_count` ids, valid for the Add call only.
inline constexpr size_t kMaxBatchRequests = 256;
struct RequestScopeActivity {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t pid = 0;
  uint64_t tid = 0;
  uint64_t id = 0;  // the request's id; a batch's own id
  bool batch = false;
  std::string_view route;  // a request's route ("" none)
  const uint64_t* batch_requests = nullptr;
  uint32_t batch_count = 0;
};

// One sample of a GPU counter, as a sampler hands it over: a value over [start, end] (PM
// sampling) or a reading at start == end (NVML).
struct CounterPoint {
  uint64_t start = 0;
  uint64_t end = 0;
  double value = 0;
};

// Where translated activities go. The chunk builder is the real sink; tests use a collecting fake.
class ActivitySink {
 public:
  virtual ~ActivitySink() = default;
  virtual void Add(const KernelActivity& a) = 0;
  virtual void Add(const ApiActivity& a) = 0;
  virtual void Add(const MemcpyRecord& r) = 0;
  virtual void Add(const MemsetRecord& r) = 0;
  virtual void Add(const SyncRecord& r) = 0;
  virtual void Add(const NvtxActivity& a) = 0;
  virtual void Add(const MemoryOpRecord& r) = 0;
  virtual void Add(const OverheadActivity& a) = 0;
  // Payloads annotate NVTX markers. Every sink says what it does with them, as with every other
  // record: a default that dropped them let a tee that forgot them lose NCCL's payloads.
  virtual void Add(const NvtxPayloadRecord& p) = 0;
  virtual void Add(const RequestScopeActivity& r) = 0;
  // A record of a kind this version does not record.
  virtual void AddUntranslated(uint32_t cupti_kind) = 0;
  // A record whose activity had not finished when CUPTI handed it over (no timestamps).
  virtual void AddIncomplete(uint32_t cupti_kind) = 0;
};

// ---- Decoded rows (reader side) -------------------------------------------------------------

struct KernelRow {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t correlation_id = 0;
  uint32_t signature = 0;  // Dictionary::signatures index
  uint32_t stream = 0;
  uint32_t graph_id = 0;
  uint32_t flags = 0;
  uint64_t graph_node_id = 0;
  uint64_t queued = 0;  // when the host queued the launch, 0 when not recorded (KernelActivity)
  bool replayed() const { return (flags & v1::KERNEL_FLAG_REPLAYED) != 0; }
};

struct ApiCallRow {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t correlation_id = 0;
  uint32_t function = 0;  // Dictionary::functions index
  uint32_t thread = 0;    // Dictionary::threads index
  uint32_t return_code = 0;
};

struct NvtxRow {
  uint64_t time = 0;
  v1::NvtxKind kind = v1::NVTX_KIND_UNKNOWN;
  uint64_t id = 0;
  uint32_t thread = 0;
  uint32_t name = 0;    // string id, 0 = none
  uint32_t domain = 0;  // string id, 0 = default domain
};

struct OverheadRow {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t kind = 0;  // string id
  uint32_t thread = 0;
  uint64_t correlation_id = 0;
};

struct MetricRow {
  uint64_t correlation_id = 0;
  uint32_t device = 0;
  uint32_t pass_count = 0;
  v1::ReplayMode replay_mode = v1::REPLAY_MODE_UNKNOWN;
  uint32_t kernel_name = 0;
  // The launch's shape; zeros when the trace predates it.
  std::array<uint32_t, 3> grid{0, 0, 0};
  std::array<uint32_t, 3> block{0, 0, 0};
  std::vector<std::pair<uint32_t, double>> values;  // (metric name string id, value)
};

// One sampled value of a GPU counter: over [start, end] (PM sampling) or at start == end (NVML).
struct CounterSample {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t device = 0;
  v1::CounterSource source = v1::COUNTER_SOURCE_UNKNOWN;
  uint32_t name = 0;  // string id
  double value = 0;
};

// A sampled launch's call stack (CUSCOPE_STACKS): the kernel row with the same correlation id.
struct LaunchStackRow {
  uint64_t correlation_id = 0;
  uint32_t stack = 0;  // a call stack id of the dictionary, checked on read
};

// A CUDA graph node's origin (GraphNodeStack in the trace): its creating stack, or the node it was
// cloned from.
struct GraphNodeRow {
  uint64_t node_id = 0;
  uint32_t stack = 0;  // 0: a clone
  uint64_t original_node_id = 0;
  uint64_t created_ns = 0;  // a created node's, on CUPTI's clock (0: unknown)
  uint32_t thread = 0;      // the creating host thread's dictionary id (0: unknown)
};

// A request scope as read back (RequestScopeActivity).
struct RequestScopeRow {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t thread = 0;  // Dictionary::threads index
  uint64_t id = 0;
  bool batch = false;
  uint32_t route = 0;  // string id, 0 = none
  std::vector<uint64_t> batch_requests;
};

// The rows of every record kind, as a chunk or a whole trace holds them.
struct RecordRows {
  std::vector<KernelRow> kernels;
  std::vector<ApiCallRow> api_calls;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<SyncRecord> syncs;
  std::vector<NvtxRow> nvtx;
  std::vector<MemoryOpRecord> memory_ops;
  std::vector<OverheadRow> overheads;
  std::vector<MetricRow> metrics;
  std::vector<CounterSample> counter_samples;
  // Annotations of launches, not activity: not counted as records.
  std::vector<LaunchStackRow> launch_stacks;
  std::vector<GraphNodeRow> graph_nodes;
  std::vector<NvtxPayloadRecord> nvtx_payloads;
  std::vector<RequestScopeRow> request_scopes;

  size_t record_count() const {
    return kernels.size() + api_calls.size() + memcpys.size() + memsets.size() + syncs.size() + nvtx.size() +
           memory_ops.size() + overheads.size() + metrics.size() + counter_samples.size();
  }
  void ClearRows();
  // Moves every row of `other` to the end of these rows; `other` is left empty.
  void AppendRows(RecordRows& other);
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORDS_H_
