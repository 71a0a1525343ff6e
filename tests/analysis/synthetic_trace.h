// Builds small traces for tests: activities in microseconds from an arbitrary origin, written
// through the real chunk builder and writer and read back with LoadTrace, so tests see exactly
// what `cuscope analyze` sees.
#ifndef CUSCOPE_TESTS_ANALYSIS_SYNTHETIC_TRACE_H_
#define CUSCOPE_TESTS_ANALYSIS_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/core/chunk_builder.h"
#include "lib/core/trace.h"

namespace cuscope::testing {

inline constexpr uint64_t kOrigin = 1'700'000'000'000'000'000ull;
// Metric values of one profiled launch, by PerfWorks name.
using MetricValues = std::vector<std::pair<std::string, double>>;

// The limits of an H200 (compute capability 9.0, 132 SMs) as the collector writes them into the
// header. The peak rates are rounded (FP32 60 TFLOP/s, DRAM 4.8 TB/s: a ridge point of 12.5 FLOP/B)
// so that tests can state expected values exactly.
v1::Device H200Device(uint32_t id = 0);

// A launch configuration; `name` is not copied: pass a string literal or a string that outlives it.
core::KernelConfig Config(std::string_view name, int grid_x, int block_x, uint32_t registers = 32,
                          int32_t dynamic_shared_memory = 0, uint32_t device = 0);

inline uint64_t Us(double us) { return static_cast<uint64_t>(static_cast<int64_t>(kOrigin) + static_cast<int64_t>(us * 1000.0)); }

class SyntheticTrace {
 public:
  SyntheticTrace();

  // An API call on host thread `tid`; returns its correlation id.
  uint64_t Api(const std::string& name, double start_us, double duration_us, uint64_t tid = 1);
  // The callback id the trace names `name` by (given on its first use), and the name of an id
  // ("unknown" for none): so that API records built elsewhere (and fed to another sink, as monitor
  // mode's aggregator) reach the trace under the same names.
  uint32_t CallbackId(const std::string& name);
  std::string ApiName(uint32_t callback_id) const;
  // A kernel; `correlation` 0 = none.
  void Kernel(const std::string& name, double start_us, double duration_us, uint32_t stream = 7,
              uint64_t correlation = 0, uint32_t graph_id = 0, uint32_t flags = 0, uint32_t device = 0,
              int grid_x = 1, int block_x = 128);
  // A kernel the host queued at `queued_us` (a queue time, as with CUSCOPE_QUEUE_TIMES), with no
  // launch call in the trace (as the light set records it).
  void QueuedKernel(const std::string& name, double queued_us, double start_us, double duration_us,
                    uint32_t stream = 7);
  // A launch call and its kernel, linked by correlation id.
  void Launch(const std::string& kernel, double api_start_us, double api_duration_us, double kernel_start_us,
              double kernel_duration_us, uint32_t stream = 7, uint64_t tid = 1, uint32_t graph_id = 0);
  void Memcpy(v1::CopyKind kind, double start_us, double duration_us, uint64_t bytes, bool async,
              v1::MemoryKind host_kind = v1::MEMORY_KIND_PINNED, uint32_t stream = 7, uint64_t correlation = 0);
  void Memset(double start_us, double duration_us, uint64_t bytes, bool async, uint32_t stream = 7,
              uint64_t correlation = 0);
  // A kernel with a full launch configuration (registers, shared memory, grid, block).
  void KernelWith(const core::KernelConfig& config, double start_us, double duration_us, uint64_t correlation = 0,
                  uint32_t flags = 0, uint32_t stream = 7);
  // A launch profiled for metrics, as the collector records it: its launch call spanning the replay,
  // the kernel record CUPTI leaves for the replayed launch (no duration; `flags` as given: the
  // analyzer must recognize it by its metric row even without KERNEL_FLAG_REPLAYED), the metric
  // row with the launch's correlation id, and a METRICS window over the call. Returns the
  // correlation id.
  uint64_t ProfiledLaunch(const core::KernelConfig& config, double start_us, double window_us,
                          const MetricValues& values, uint32_t flags = 0);
  // A launch's call stack: frames (module path, mangled function or "" for none), innermost first;
  // a Python frame is ("py:FILE:LINE", qualified name).
  void LaunchStack(uint64_t correlation, const std::vector<std::pair<std::string, std::string>>& frames);
  // A CUDA graph's kernel run by node `node` of graph `graph_id`, under its graph launch `correlation`.
  void GraphKernel(const std::string& name, double start_us, double duration_us, uint32_t graph_id, uint64_t node,
                   uint64_t correlation);
  // A graph node created with these frames, and one cloned from another.
  void GraphNode(uint64_t node, const std::vector<std::pair<std::string, std::string>>& frames);
  void GraphNodeClone(uint64_t node, uint64_t original);
  // The same as GraphNode, created at `created_us` on host thread `tid` (of pid 42, as Api and NvtxRange).
  void GraphNodeAt(uint64_t node, const std::vector<std::pair<std::string, std::string>>& frames, double created_us,
                   uint64_t tid);
  // The replay passes the metric rows below say they took (default 8; 9 after the window).
  void set_metric_passes(uint32_t passes) { metric_passes_ = passes; }
  // A metric row and its METRICS window alone.
  void Metrics(uint64_t correlation, const std::string& kernel, uint32_t device, double window_start_us,
               double window_us, const MetricValues& values);
  // A launch profiled while the timeline was off (the top-down's metrics phase): its metric row
  // with the launch's grid and block, and its METRICS window; no kernel row, no launch call.
  void MetricsAfterWindow(const core::KernelConfig& config, double window_start_us, double window_us,
                          const MetricValues& values);
  // A TIMELINE capture window, whole; or its opening or closing half alone (as the collector writes
  // a window it opens and closes at different times).
  void TimelineWindow(double start_us, double end_us, const std::string& reason = "session");
  void TimelineWindowOpens(double start_us, const std::string& reason = "session");
  void TimelineWindowCloses(double end_us, const std::string& reason = "end");
  // Samples of one GPU counter: (start us, duration us, value); duration 0 for NVML readings.
  struct Sample {
    double start_us = 0;
    double duration_us = 0;
    double value = 0;
  };
  void Counter(const std::string& name, v1::CounterSource source, const std::vector<Sample>& samples,
               uint32_t device = 0);
  // NVML readings at `start_us + i * period_us`, one per value.
  void NvmlReadings(const std::string& name, double start_us, double period_us, const std::vector<double>& values,
                    uint32_t device = 0);
  // The top-down's choice: each kernel a (config, GPU time in us, launches), hottest first as given.
  struct Hot {
    core::KernelConfig config;
    double total_us = 0;
    uint64_t launches = 0;
  };
  void TopDown(double time_us, double window_kernel_us, const std::vector<Hot>& kernels);
  // Devices for the header.
  void AddDevice(const v1::Device& device) { *header_.add_devices() = device; }
  // The header as it will be written (capture settings, metrics requested).
  v1::Header& header() { return header_; }
  void StreamWaitEvent(uint32_t stream, double start_us, double duration_us);
  // A request scope (cuscope::RequestScope) on host thread `tid`, or a batch scope naming `members`.
  void RequestScope(uint64_t id, const std::string& route, double start_us, double end_us, uint64_t tid = 1);
  void BatchScope(uint64_t id, const std::vector<uint64_t>& members, double start_us, double end_us, uint64_t tid = 1);
  // `end_tid` 0: ended on `tid` (a push/pop range); another thread: a start/end range.
  void NvtxRange(const std::string& name, double start_us, double end_us, uint64_t tid = 1, uint64_t end_tid = 0);
  // An NCCL call as NCCL 2.25+ marks it: an NVTX range named `api` in the "NCCL" domain with its
  // extended payload (schema 2^24 + sid: the communicator's hash, the bytes, one int), or with no
  // payload when `bytes` is 0.
  void NcclCall(const std::string& api, double start_us, double end_us, uint64_t communicator, uint64_t bytes,
                int32_t extra = 0, uint64_t tid = 1);
  // The clock reference the last chunk carries (CUPTI time and wall clock read together).
  void ClockReference(uint64_t cupti_ns, uint64_t realtime_ns) {
    clock_reference_.set_cupti_ns(cupti_ns);
    clock_reference_.set_realtime_ns(realtime_ns);
  }

  core::ChunkBuilder& builder() { return *builder_; }
  // Writes the file (or reuses it when already written) and returns its path.
  std::string Write();
  core::Trace Load();

 private:
  std::map<std::string, uint32_t> callback_of_;
  std::map<uint32_t, std::string> name_of_;
  std::unique_ptr<core::ChunkBuilder> builder_;
  v1::Header header_;
  uint64_t next_correlation_ = 1000;
  uint32_t metric_passes_ = 0;  // 0: the defaults above
  // A named frame's offset in its module: one per (module, function), as in a real module.
  uint64_t FrameOffset(const std::string& module, const std::string& function, uint64_t positional);
  // The frames interned, innermost first (unnamed ones at `first_offset` + 0x10 per position).
  uint32_t InternStack(const std::vector<std::pair<std::string, std::string>>& frames, uint64_t first_offset);
  std::map<std::pair<std::string, std::string>, uint64_t> frame_offsets_;
  uint64_t next_nvtx_ = 1;
  v1::ClockReference clock_reference_;
  std::string path_;
};

// A path in the test's temporary directory, unique per call.
std::string TempTracePath();

}  // namespace cuscope::testing

#endif  // CUSCOPE_TESTS_ANALYSIS_SYNTHETIC_TRACE_H_
