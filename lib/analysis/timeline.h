// The timeline model: a trace's GPU work per device and stream, its API calls per host thread,
// and the links between them (correlation ids), as indices into the trace's own row vectors so
// that the model costs a few bytes per record on top of the trace.
//
// Replayed kernel launches (metric collection) are not part of the timeline: CUPTI serializes the
// context to replay them and their timing is not the program's. A launch is replayed when its row
// carries KERNEL_FLAG_REPLAYED or when a metric row has its correlation id. The spans of METRICS
// capture windows (kernel replay in progress: the context is serialized for 100s of ms) and the
// launch calls of profiled launches are kept apart too: idle time inside them is the profiler's,
// not the program's.
//
// TIMELINE capture windows say when the timeline was recorded. Outside them (before a delay
// ended, between two cudaProfilerStart/Stop ranges, in a top-down's metrics phase after its window
// closed) nothing was recorded, so an idle stretch there is not the GPU idling: it is neither busy
// nor idle. A trace without TIMELINE windows (older collectors, synthetic traces) counts as
// captured from its first record to its last.
#ifndef CUSCOPE_LIB_ANALYSIS_TIMELINE_H_
#define CUSCOPE_LIB_ANALYSIS_TIMELINE_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/api_names.h"
#include "lib/analysis/interval_names.h"
#include "lib/core/stuck_correlation.h"
#include "lib/core/trace.h"

namespace cuscope::analysis {

enum class OpKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

// A GPU operation: its kind and its index in the trace's kernels/memcpys/memsets, in 4 bytes.
class OpRef {
 public:
  OpRef() = default;
  OpRef(OpKind kind, uint32_t index) : packed_((static_cast<uint32_t>(kind) << 30) | index) {}
  OpKind kind() const { return static_cast<OpKind>(packed_ >> 30); }
  uint32_t index() const { return packed_ & 0x3fffffffu; }

 private:
  uint32_t packed_ = 0;
};

struct StreamInfo {
  uint32_t device = 0;
  uint32_t stream = 0;
  uint64_t ops = 0;
  uint64_t busy_ns = 0;  // union of the stream's operations
  Interval active;       // first operation's start to last one's end
};

struct DeviceTimeline {
  uint32_t device = 0;
  std::vector<OpRef> ops;  // kernels, copies and memsets in start order
  IntervalSet busy;        // union of all of them: never a per-stream sum
  Interval active;         // first operation's start to last one's end
  uint64_t kernel_count = 0;
  uint64_t kernel_time_ns = 0;  // sum of kernel durations (overlapping kernels both count)
  // The idle stretches of the active span that lie inside METRICS windows: time metric collection
  // took, which is neither busy nor idle for the program.
  IntervalSet metrics_idle;
  // The idle stretches of the active span outside every capture window and not in `metrics_idle`:
  // the timeline was off, so they are neither busy nor idle. Empty without capture windows.
  IntervalSet unobserved_idle;
  // The measured duration (gpu__time_duration) of the launches replayed for metrics while the
  // timeline was captured: the program's GPU work, though the timeline cannot place it.
  uint64_t replayed_kernel_ns = 0;
  uint64_t busy_ns() const { return TotalLength(busy); }
  uint64_t metrics_idle_ns() const { return TotalLength(metrics_idle); }
  uint64_t unobserved_idle_ns() const { return TotalLength(unobserved_idle); }
  // The active span without metric collection and unobserved time: what busy share and idle time
  // are judged on.
  uint64_t counted_active_ns() const {
    const uint64_t skipped = metrics_idle_ns() + unobserved_idle_ns();
    return active.length() - std::min(active.length(), skipped);
  }
  // Busy time with the launches replayed for metrics counted busy for their measured duration (at
  // most the idle time they could have filled): the program's work where the timeline cannot show
  // it. The busy share every output gives is this over counted_active_ns().
  uint64_t busy_with_replays_ns() const { return BusyWithReplays(busy_ns(), counted_active_ns(), replayed_kernel_ns); }
  // The same rule for any stretch of it (the steady state): `busy` of `counted` nanoseconds, with
  // up to `replayed` more from the replays filling idle time.
  static uint64_t BusyWithReplays(uint64_t busy, uint64_t counted, uint64_t replayed) {
    return busy + std::min(counted - std::min(counted, busy), replayed);
  }
  // metrics_idle and unobserved_idle together: the stretches the idle analysis skips.
  IntervalSet NotCounted() const { return unobserved_idle.empty() ? metrics_idle : Union(metrics_idle, unobserved_idle); }
};

struct NvtxRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint32_t name = 0;  // string id
  // Ended on another thread than it began: a start/end range (nvtxRangeStart/End). CUPTI's records
  // do not tell push/pop from start/end; one that ends on its own thread reads as push/pop, as in
  // the SQLite export's NVTX_EVENTS.
  bool ended_elsewhere = false;
};

struct ThreadTimeline {
  uint32_t thread = 0;              // Dictionary thread id
  std::vector<uint32_t> api_calls;  // indices into trace.api_calls, by start
  std::vector<NvtxRange> ranges;    // by start
  Interval active;                  // first call's start to last call's end
};

class Timeline {
 public:
  // The trace must outlive the timeline.
  static Timeline Build(const core::Trace& trace);

  const core::Trace& trace() const { return *trace_; }
  const std::vector<DeviceTimeline>& devices() const { return devices_; }
  const std::vector<StreamInfo>& streams() const { return streams_; }
  const std::vector<ThreadTimeline>& threads() const { return threads_; }
  // First to last recorded activity of any kind.
  Interval span() const { return span_; }
  // Kernels on the timeline (replayed launches excluded).
  uint64_t kernel_count() const { return kernel_count_; }
  uint64_t replayed_kernel_count() const { return replayed_kernels_; }
  // A correlation id CUPTI gave to most of the trace's kernels launched outside CUDA graphs instead
  // of one per launch, and how many kernels carry it (core/stuck_correlation.h). Such ids tie
  // nothing to anything: a kernel of that id that has a duration of its own stays on the timeline
  // even when a metric row (or the collector's replay flag) shares the id.
  using StuckCorrelation = core::StuckCorrelation;
  static constexpr uint64_t kStuckCorrelationKernels = core::StuckCorrelationVote::kMinKernels;
  const std::optional<StuckCorrelation>& stuck_correlation() const { return stuck_correlation_; }
  // The time metric collection took: the union of the METRICS capture windows (a window still open
  // at the end is closed at the end of the span) and of the launch calls of profiled launches, and
  // how many METRICS windows there were.
  const IntervalSet& metric_windows() const { return metric_windows_; }
  uint64_t metric_window_count() const { return metric_window_count_; }
  // The TIMELINE capture windows as a set (see CaptureWindowSet); empty when the trace records none.
  const IntervalSet& capture_windows() const { return capture_windows_; }
  bool has_capture_windows() const { return !capture_windows_.empty(); }
  // Whether the timeline was being recorded at `time`: inside a capture window, or anywhere when the
  // trace records none.
  bool Captured(uint64_t time) const { return capture_windows_.empty() || Covers(capture_windows_, time); }
  // Whether a launch replayed for metrics ran while the timeline was recorded, so that its measured
  // duration belongs to the timeline's GPU time. It is placed by its kernel row (which the
  // collector puts at the start of the profiling) or its launch call. A launch with neither ran
  // while the timeline was off when the trace is a top-down's (its metrics phase follows the
  // window); otherwise it counts, as in traces without capture windows.
  bool ReplayCaptured(const core::MetricRow& row) const;

  Interval OpInterval(OpRef op) const;
  uint32_t OpStream(OpRef op) const;
  uint32_t KernelDevice(const core::KernelRow& k) const;
  // A launch CUPTI replayed for metrics: flagged so, or one whose correlation id a metric row has.
  bool Replayed(const core::KernelRow& k) const {
    return core::IsReplayedLaunch(k, !profiled_correlations_.empty() && Profiled(k.correlation_id), stuck_correlation_);
  }
  bool OnTimeline(const core::KernelRow& k) const { return !Replayed(k); }
  // Whether a metric row has this correlation id (never a stuck one).
  bool Profiled(uint64_t correlation_id) const {
    if (stuck_correlation_ && correlation_id == stuck_correlation_->id) return false;  // ties nothing
    return correlation_id != 0 &&
           std::binary_search(profiled_correlations_.begin(), profiled_correlations_.end(), correlation_id);
  }

  // The API call that issued a GPU operation, or null.
  const core::ApiCallRow* ApiFor(uint64_t correlation_id) const;
  // Kernel start minus the end of the API call that launched it (negative when the kernel began
  // before the call returned); nullopt when the call is not in the trace.
  std::optional<int64_t> LaunchDelay(const core::KernelRow& kernel) const;

  const core::ApiTraits& Traits(const core::ApiCallRow& call) const;
  std::string_view ApiName(const core::ApiCallRow& call) const;  // display name, no _vNNNN
  std::string_view KernelName(const core::KernelRow& kernel) const;
  // The innermost NVTX range of a thread holding `time`, or null.
  const NvtxRange* EnclosingRange(uint32_t thread, uint64_t time) const;
  const ThreadTimeline* Thread(uint32_t thread) const;
  std::string ThreadLabel(uint32_t thread) const;

 private:
  struct StreamIndex;
  // The API call correlation ids seen: none when max < min.
  struct CorrelationRange {
    uint64_t min = std::numeric_limits<uint64_t>::max();
    uint64_t max = 0;
  };
  // The steps of Build, in the order it takes them: each reads what the ones before it built.
  void ClassifyApiFunctions();
  void CollectProfiledCorrelations();
  void DetectStuckCorrelation();
  // Devices and their streams, from the GPU operations (replayed launches counted and left out).
  void BuildDevices();
  void AddDeviceOps(DeviceTimeline& d, StreamIndex& streams);
  // Host threads: their API calls and NVTX ranges; returns the range of the calls' correlation ids.
  CorrelationRange BuildThreads();
  void AddNvtxRanges();
  ThreadTimeline& ThreadFor(uint32_t thread);  // created when new
  void BuildMetricWindows();
  void BuildCaptureWindows();
  void IndexCorrelations(CorrelationRange range);
  void AddReplayedKernelTime();

  const core::Trace* trace_ = nullptr;
  std::vector<DeviceTimeline> devices_;
  std::vector<StreamInfo> streams_;
  std::vector<ThreadTimeline> threads_;
  std::vector<uint32_t> thread_slot_;  // thread id -> index in threads_ + 1
  Interval span_;
  uint64_t kernel_count_ = 0;
  uint64_t replayed_kernels_ = 0;
  std::vector<uint64_t> profiled_correlations_;  // of the metric rows, sorted, unique
  std::optional<StuckCorrelation> stuck_correlation_;
  IntervalSet metric_windows_;
  uint64_t metric_window_count_ = 0;
  IntervalSet capture_windows_;
  // (correlation id, start) of the kernel rows of profiled launches, sorted; kept only when the
  // trace has capture windows (for ReplayCaptured).
  std::vector<std::pair<uint64_t, uint64_t>> profiled_starts_;
  std::vector<core::ApiTraits> traits_;  // by function id
  std::vector<std::string_view> api_names_;  // by function id
  // Correlation id -> api call index + 1: dense from `corr_base_` when ids are dense, otherwise a
  // sorted list searched by binary search.
  uint64_t corr_base_ = 0;
  std::vector<uint32_t> corr_dense_;
  std::vector<std::pair<uint64_t, uint32_t>> corr_sorted_;
  const core::ApiCallRow* ApiForSparse(uint64_t correlation_id) const;
};

// A device's steady state, the one every output means by the words: from the start-up's end to the
// device's last operation's end. The start-up is the device's first `startup_ops_share` of its
// operations (Thresholds::idle_startup_ops_share, 1% by default): it ends where the operation
// that share into them starts (at the first operation when the share rounds to none). gpu.idle
// judges idle time on it; `diff` and the report compare it between runs.
struct SteadyState {
  Interval span;
  uint64_t counted_ns = 0;  // the span less metric collection and unobserved time (NotCounted)
  uint64_t busy_ns = 0;     // busy in it, replayed launches counted busy as BusyWithReplays does
};
SteadyState SteadyStateOf(const Timeline& timeline, const DeviceTimeline& device, double startup_ops_share);

// The windows of one kind as a set. A window arrives whole, or as an opening half (end 0) and a
// later closing half (start 0) of the same kind; a half whose other half is missing runs to the end
// of `span` (still open when the trace ended) or from its start.
IntervalSet CaptureWindowSet(const std::vector<v1::CaptureWindow>& windows, v1::WindowKind kind, Interval span);

// Called once or more per record by the rules and tables: defined here so that they inline.

inline Interval Timeline::OpInterval(OpRef op) const {
  switch (op.kind()) {
    case OpKind::kKernel: {
      const auto& k = trace_->kernels[op.index()];
      return {k.start, std::max(k.start, k.end)};
    }
    case OpKind::kMemcpy: {
      const auto& m = trace_->memcpys[op.index()];
      return {m.start, std::max(m.start, m.end)};
    }
    case OpKind::kMemset: {
      const auto& m = trace_->memsets[op.index()];
      return {m.start, std::max(m.start, m.end)};
    }
  }
  return {};
}

inline uint32_t Timeline::OpStream(OpRef op) const {
  switch (op.kind()) {
    case OpKind::kKernel: return trace_->kernels[op.index()].stream;
    case OpKind::kMemcpy: return trace_->memcpys[op.index()].stream;
    case OpKind::kMemset: return trace_->memsets[op.index()].stream;
  }
  return 0;
}

inline const core::ApiCallRow* Timeline::ApiFor(uint64_t correlation_id) const {
  if (correlation_id == 0) return nullptr;
  if (!corr_dense_.empty()) {
    if (correlation_id < corr_base_ || correlation_id - corr_base_ >= corr_dense_.size()) return nullptr;
    const uint32_t slot = corr_dense_[correlation_id - corr_base_];
    return slot == 0 ? nullptr : &trace_->api_calls[slot - 1];
  }
  return ApiForSparse(correlation_id);
}

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_TIMELINE_H_
