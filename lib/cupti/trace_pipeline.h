// The collector's writer room: CUPTI's completed buffers in, trace chunks out.
//
// CUPTI's buffer callbacks only take a buffer from the pool or queue a completed one; one writer
// thread takes its turns from the inbox (writer_inbox.h), translates the records into the sinks the
// mode's route names (record_route.h), adds what the other rooms handed it beside them (capture
// windows, GPU counter samples, profiled launches, stacks, the top-down's turn to choose) and
// writes a chunk after each buffer. A write that fails stops the writing for good: the trace keeps what was written
// before, the buffers are still given back, and a hook tells the collector to stop recording.
//
// Its side windows (monitor mode's trace window, a capture, a snapshot) move only by the trigger
// home's commands (capture_controller.h), one of each at a time; their table is in
// docs/architecture.md ("Triggers: one home").
//
// In flight mode the chunks go to a bounded ring in memory instead (lib/core/flight_ring.h), and
// RequestSnapshot writes the ring to a file: the writer thread takes the ring's contents at its
// turn in the queue (behind every buffer CUPTI had completed), and a snapshot thread writes them,
// so neither the program's threads nor the writer wait on the disk.
#ifndef CUSCOPE_LIB_CUPTI_TRACE_PIPELINE_H_
#define CUSCOPE_LIB_CUPTI_TRACE_PIPELINE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "lib/core/buffer_pool.h"
#include "lib/core/chunk_builder.h"
#include "lib/settings/config.h"
#include "lib/core/flight_ring.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/process/python_stack.h"
#include "lib/core/step_range_watch.h"
#include "lib/core/trace_writer.h"
#include "lib/cupti/chunk_destinations.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/cupti_gate.h"
#include "lib/cupti/gpu_counter_sampler.h"
#include "lib/cupti/kernel_metrics_collector.h"
#include "lib/cupti/mode_figures.h"
#include "lib/cupti/record_route.h"
#include "lib/cupti/stack_interner.h"
#include "lib/cupti/timed_call_queue.h"
#include "lib/cupti/translate.h"
#include "lib/cupti/trigger_commands.h"
#include "lib/cupti/writer_inbox.h"
#include "lib/monitor/figures.h"
#include "lib/monitor/idle_trigger.h"
#include "lib/monitor/interval_aggregator.h"

namespace cuscope::cupti {

// GPU counter samples taken so far, for the trace's capture statistics.
struct CounterTotals {
  uint64_t samples = 0;
  uint64_t overflows = 0;
};

class TracePipeline {
 public:
  enum class State {
    kHeaderPending,  // nothing written yet: the first chunk writes the header first
    kWriting,
    kFailed,    // a write failed: nothing more is written
    kFinished,  // the final chunk is written and the writer thread has returned
  };

  // Called on the writer thread. All optional.
  struct Hooks {
    std::function<void()> write_failed;  // once, when writing stops for good
    // The top-down's hottest kernels of its window (empty when no kernel ran), to profile on
    // their next `launches_each` launches.
    std::function<void(std::vector<core::HotKernelChoice>, uint64_t launches_each)> hot_kernels_chosen;
    // A capture's top-down: its kernel metrics begin (true: the GPU counters are given back and the
    // launch callbacks go on; false when that failed, with the line already said) and end
    // (`begin` false: the reverse). Called on the snapshot thread.
    std::function<bool(bool begin)> kernel_metrics_phase;
    std::function<CounterTotals()> counter_totals;
    // CUPTI detached and attached between a duty cycle's windows (cupti_attachment.h), so far.
    std::function<void(v1::CaptureStats*)> attachment_figures;
    // Monitor mode: intervals of figures as they close, oldest first.
    std::function<void(const std::vector<monitor::IntervalFigures>&)> intervals_closed;
    // Flight mode with a step range: a range of that name that took longer than the threshold
    // (its length in ns). It may start a snapshot (RequestSnapshot), never wait for the writer.
    std::function<void(uint64_t)> slow_step_range;
    // Flight mode with the idle trigger: a device idle over the share of the window. The same
    // rules as slow_step_range.
    std::function<void(const monitor::IdleEvent&)> gpu_idle;
    // Monitor mode under a duty cycle: something now needs every record (a trace window or capture
    // opened, the program's first request scope); called on the thread that asked for it.
    std::function<void()> every_record_wanted;
  };

  // `header` is completed with the machine's devices and versions when it is written. `writer` is
  // null in monitor mode without an output file: the figures go to the hook alone. In monitor mode
  // the records are folded into figures and reach the trace only inside a trace window.
  TracePipeline(const settings::Config& config, CuptiApi& cupti, std::unique_ptr<core::TraceWriter> writer,
                v1::Header header, std::function<void(const std::string&)> warn, Hooks hooks);
  ~TracePipeline();
  TracePipeline(const TracePipeline&) = delete;
  TracePipeline& operator=(const TracePipeline&) = delete;

  // Before StartWriting: the builder keeps per-kernel totals for the top-down's choice.
  void EnableKernelTotals() { builder_.EnableKernelTotals(); }
  // Fails (the thread could not be created) without throwing.
  absl::Status StartWriting();
  // Writes everything queued and the final chunk, then returns with the writer thread joined.
  void FinishWriting();
  absl::Status Close() { return writer_ != nullptr ? writer_->Close() : absl::OkStatus(); }
  // After FinishWriting: gives back the spare buffers and the chunk's capacity, so a server that
  // starts and stops sessions for years keeps its memory flat.
  void ReleaseMemory();

  // CUPTI's buffer callbacks: a pool buffer (nullptr at the pool's cap), and a completed one.
  uint8_t* AcquireBuffer();
  size_t buffer_bytes() const { return pool_.buffer_bytes(); }
  void BufferCompleted(uint8_t* buffer, size_t valid);
  void CountDropped(uint64_t records) { dropped_by_cupti_.fetch_add(records, std::memory_order_relaxed); }
  void CountCallbackTime(uint64_t ns) { callback_ns_.fetch_add(ns, std::memory_order_relaxed); }

  // From the other rooms; each lands in the next chunk.
  // Trace mode with the activity kinds held on from the start (CaptureController::HoldKinds):
  // only records inside a timeline span reach the trace. Spans open and close with the windows.
  void FilterToTimelineSpans() { route_->FilterToTimelineSpans(); }
  void OpenTimelineSpan(uint64_t start_ns) { route_->OpenTimelineSpan(start_ns); }
  void CloseTimelineSpan(uint64_t end_ns) { route_->CloseTimelineSpan(end_ns); }
  void QueueWindow(bool open, uint64_t time, const std::string& reason, v1::WindowKind kind);
  void QueueProfiledLaunch(ProfiledLaunch launch);
  // A sampled launch's call stack: `n` return addresses, innermost first (LaunchStackCollector).
  // Resolved and interned on the writer thread; cuscope's and CUPTI's own frames are left out. In a
  // Python program, `python` holds the launching thread's Python frames, innermost first. At most
  // kMaxQueuedLaunchStacks wait for the writer; past that a stack is dropped and counted
  // (launch_stacks_dropped), so a writer that falls behind cannot make memory grow without bound.
  static constexpr size_t kMaxQueuedLaunchStacks = WriterInbox::kMaxQueuedLaunchStacks;
  void QueueLaunchStack(uint64_t correlation_id, const uintptr_t* return_addresses, size_t n,
                        std::vector<process::PythonFrame> python);
  // A CUDA graph node's creating stack, and a node cloned from another (instantiation).
  void QueueGraphNodeStack(uint64_t node_id, const uintptr_t* return_addresses, size_t n,
                           std::vector<process::PythonFrame> python, uint64_t created_ns, uint64_t tid);
  void QueueGraphNodeClone(uint64_t node_id, uint64_t original_node_id);
  void QueueCounterBatches(std::vector<CounterBatch> batches);
  // Lean collection's calls (CallTimer), from the program's threads at each call's exit; either
  // may be null. They reach the sinks with the next buffer; every kTimedCallBatch calls wake the
  // writer. At most kMaxQueuedTimedCalls wait: past that a call is dropped and counted with the
  // records CUPTI dropped, so a writer that falls behind cannot make memory grow without bound.
  static constexpr size_t kTimedCallBatch = TimedCallQueue::kBatch;
  static constexpr size_t kMaxQueuedTimedCalls = TimedCallQueue::kMaxQueued;
  void QueueTimedCall(const core::ApiActivity* call, const core::SyncRecord* sync);
  // A request or batch scope's begin (end 0) or end (RequestScopes), from the program's threads;
  // beside the timed calls, within the same cap, and handed to the sinks before them.
  void QueueRequestScope(const core::RequestScopeActivity& scope);
  // The top-down's turn, behind every buffer queued so far: its `kernels` hottest kernels, each
  // to be profiled on `launches_each` launches.
  void QueueHotKernelChoice(uint32_t kernels, uint64_t launches_each);
  // Monitor mode's duty cycle (lib/monitor/sample_windows.h): a recording window opens or closes,
  // at `time` (CUPTI clock: taken before the kinds go on, after they go off). The writer hands the
  // edges to the figures before the next buffer's records.
  void QueueSampleEdge(bool open, uint64_t time, double weight = 1);
  // Under a duty cycle, whether every record is needed now: a trace window or a capture's window is
  // open, or the program uses request scopes (a request's GPU time needs all its kernels). A
  // capture's top-down, after its window, is not: while its hot kernels are replayed the duty cycle
  // thins the records again (recorded whole, a launch storm filled the buffer cap there and the
  // figures of those intervals lost what CUPTI dropped).
  bool wants_every_record() const {
    return trace_window_.load() || request_scopes_seen_.load(std::memory_order_relaxed);
  }
  // Nudges the writer after QueueWindow; the window itself reaches the trace with the next chunk
  // (writer_inbox.h says when that is).
  void Wake() { inbox_.Wake(); }

  // Monitor mode: every record also goes to the trace from now on, until CloseTraceWindow or, with
  // `seconds` > 0, that long. FailedPrecondition outside monitor mode, without a file, or with a
  // window open.
  absl::Status OpenTraceWindow(double seconds);
  // Flight mode: writes the last seconds kept to `path` (created now: an error is returned at
  // once), after waiting `after_seconds` so that the seconds after the request are in it too.
  // `done` is called on the snapshot thread with the outcome and a line that says what was
  // written. FailedPrecondition outside flight mode or while another snapshot is being written.
  absl::Status RequestSnapshot(const std::string& path, double after_seconds, bool force_overwrite,
                               std::function<void(const absl::Status&, const std::string&)> done);
  // Monitor and flight modes: the records of the next `seconds` to `path` (created now), written
  // by the snapshot thread once they are over; `done` as for RequestSnapshot. Monitor mode opens a
  // window for them (refused while another is open); flight mode takes them from its ring
  // (refused when longer than the ring's span). FailedPrecondition in trace mode, or while another
  // capture or snapshot is being written. With `top_down.kernels`, monitor mode only (and a
  // kernel_metrics_phase hook): after the window, the window's hottest kernels are chosen and
  // profiled, and the file waits for their metrics.
  absl::Status RequestCapture(const std::string& path, double seconds, bool force_overwrite, CaptureTopDown top_down,
                              std::function<void(const absl::Status&, const std::string&)> done);
  bool flight_recording() const { return config_.mode == settings::CollectionMode::kFlight; }
  // Closes the window OpenTraceWindow opened (not a capture's).
  absl::Status CloseTraceWindow();
  // What the flight ring holds, as of its latest chunk (any thread).
  uint64_t ring_chunks() const { return flight_ring_ != nullptr ? flight_ring_->chunks() : 0; }
  uint64_t ring_bytes() const { return flight_ring_ != nullptr ? flight_ring_->bytes() : 0; }
  uint64_t ring_held_ns() const { return flight_ring_ != nullptr ? flight_ring_->held_ns() : 0; }
  // A capture or snapshot is being written.
  bool capture_busy() const { return snapshot_busy_.load(); }
  bool monitoring() const { return config_.mode == settings::CollectionMode::kMonitor; }

  State state() const { return state_.load(); }
  bool failed() const { return state_.load() == State::kFailed; }
  const std::string& path() const { return writer_ != nullptr ? writer_->path() : no_path_; }
  uint64_t records_written() const { return records_written_; }  // after FinishWriting
  uint64_t kernels_written() const { return kernels_written_; }   // after FinishWriting
  uint64_t bytes_written() const { return writer_ != nullptr ? writer_->bytes_written() : 0; }
  uint64_t dropped_by_cupti() const { return dropped_by_cupti_.load(); }
  uint64_t buffers_refused() const { return pool_.refused(); }
  uint64_t launch_stacks_dropped() const { return inbox_.launch_stacks_dropped(); }
  // Whether CUPTI's records reach this session: the calls the callbacks timed, and the kernel
  // records translated so far (an attached session checks that the second follows the first).
  uint64_t timed_calls_queued() const { return timed_.calls_queued(); }
  // Waits (at most `wait`) until the writer walked every buffer CUPTI completed so far, a walk
  // being CUPTI calls: before CUPTI is detached (cupti_attachment.h). False when it did not in time.
  bool WaitBuffersWalked(std::chrono::milliseconds wait);
  // Before StartWriting, when CUPTI may be detached: each buffer's walk passes `gate` (one pass a
  // buffer, not a record); a buffer that finds it closed is given back unread and counted.
  void WalkBuffersThrough(CuptiGate* gate) { walk_gate_ = gate; }
  uint64_t buffers_not_walked() const { return buffers_not_walked_.load(std::memory_order_relaxed); }
  uint64_t kernel_records_seen() const { return kernel_records_seen_.load(std::memory_order_relaxed); }
  // Of the timed calls, the kernel launches (launch_callbacks.h): each should bring a kernel record.
  uint64_t timed_launches_queued() const { return timed_.launches_queued(); }

 private:
  struct TurnRunner;  // the visitor that runs a turn on the writer thread
  struct SnapshotRequest {
    std::string path;
    double after_seconds = 0;
    bool force_overwrite = false;
    const char* what = "snapshot";  // "capture": how its lines name it
    uint64_t since_ns = 0;          // chunks taken before this are left out
    bool monitor_window = false;    // monitor mode: a window opened for it, closed when it ends
    CaptureTopDown top_down;        // monitor mode: kernel metrics after the window
  };

  void WriterLoop();
  void ProcessBuffer(const CompletedBuffer& b);
  // The buffer's records (none for a buffer-less turn), after the timed calls queued so far.
  void TranslateBuffer(const CompletedBuffer& b, core::ActivitySink& sink);
  void ChooseHotKernels(uint32_t kernels, uint64_t launches_each);
  // The snapshot thread, after a capture's window: the choice, then the launches' metrics, until
  // all are in or the wait is over. A line's end that says what was profiled.
  std::string RunCaptureTopDown(const CaptureTopDown& top_down);
  void TakeProfiled();
  void WriteChunk(bool final_chunk);
  bool WriteHeaderIfPending();
  void AddQueuedExtras(bool* had_windows);
  void FillCaptureStats(v1::CaptureStats* stats);
  void Fail(const std::string& message);
  // Monitor and flight modes: closes the intervals no record can reach any more (all of them at
  // the end): to the hooks and, in monitor mode with a file, to the next chunk (mode_figures.h).
  void CloseIntervals(bool all);
  void CloseExpiredTraceWindow();
  void CompleteHeaderOnce();  // the machine's devices and versions, once
  void TakeSnapshot();        // writer thread: the ring's contents to the waiting snapshot thread
  absl::Status StartSnapshot(SnapshotRequest request, std::function<void(const absl::Status&, const std::string&)> done);
  void SnapshotLoop(std::unique_ptr<core::TraceWriter> writer, SnapshotRequest request,
                    std::function<void(const absl::Status&, const std::string&)> done);
  absl::Status OpenWindow(double seconds, const std::string& reason);
  absl::Status CloseWindow(const std::string& reason);
  void JoinSnapshotThread();

  const settings::Config& config_;
  CuptiApi& cupti_;
  std::unique_ptr<core::TraceWriter> writer_;
  v1::Header header_;
  std::function<void(const std::string&)> warn_;
  Hooks hooks_;
  core::BufferPool pool_;
  std::atomic<State> state_{State::kHeaderPending};

  // Written by CUPTI's callbacks.
  std::atomic<uint64_t> buffers_requested_{0};
  std::atomic<uint64_t> buffers_completed_{0};
  std::atomic<uint64_t> buffers_queued_{0};  // completed buffers handed to the writer
  std::atomic<uint64_t> buffers_walked_{0};  // of those, walked (and given back) by the writer
  CuptiGate* walk_gate_ = nullptr;           // WalkBuffersThrough
  std::atomic<uint64_t> buffers_not_walked_{0};
  std::atomic<uint64_t> dropped_by_cupti_{0};
  std::atomic<uint64_t> callback_ns_{0};

  // What the other rooms hand the writer (its own lock); the timed calls and request scopes have
  // theirs, taken on the program's threads.
  WriterInbox inbox_;
  std::atomic<uint64_t> kernel_records_seen_{0};
  TimedCallQueue timed_;

  // Writer thread only.
  std::thread thread_;
  core::ChunkBuilder builder_;
  std::vector<ProfiledLaunch> profiled_pending_;  // taken from the inbox, not yet in a chunk
  StackInterner stack_interner_;  // after builder_
  void AddQueuedStacks();
  ReplayedLaunches replayed_;                     // every profiled launch of the session
  uint64_t records_written_ = 0;
  uint64_t kernels_written_ = 0;
  // The last chunk given a clock reference, on CUPTI's clock (writer thread).
  static constexpr uint64_t kClockReferencePeriodNs = 10'000'000'000ull;
  uint64_t last_clock_reference_ns_ = 0;
  uint64_t writer_ns_ = 0;
  uint64_t chunks_written_ = 0;
  uint64_t write_errors_ = 0;
  v1::Chunk chunk_;  // reused: its buffers keep their capacity from chunk to chunk

  // Monitor mode's figures, or flight mode's for its idle trigger; null in trace mode (chosen at
  // construction; the writer thread closes their intervals).
  std::unique_ptr<ModeFigures> figures_;
  std::atomic<bool> request_scopes_seen_{false};
  // Whether a trace window (or a capture's) is open, so that only one is, and under a duty cycle
  // every record is wanted; the window's end on the steady clock (0 = none). Where records and
  // counter samples go is the route's spans.
  std::atomic<bool> trace_window_{false};
  std::atomic<int64_t> trace_window_end_ns_{0};
  // One window edge at a time, its flag, end, span and queued edge together: the writer closing an
  // expired window and a command opening the next must not interleave (the close would end the new
  // window's span and timer).
  std::mutex window_mu_;
  const std::string no_path_;

  // Where chunks go (null: nowhere), chosen for the mode at construction; of it, flight mode's ring
  // and monitor mode's capture ring (writer thread).
  std::unique_ptr<ChunkDestination> destination_;
  FlightRingDestination* flight_ring_ = nullptr;
  MonitorDestination* monitor_destination_ = nullptr;
  std::atomic<bool> capture_window_{false};   // the open window is a capture's
  std::unique_ptr<core::StepRangeWatch> step_watch_;  // writer thread

  // Where a buffer's records go, composed once for the mode (record_route.h); after builder_,
  // figures_ and step_watch_, which it uses.
  std::unique_ptr<RecordRoute> route_;
  std::mutex snapshot_start_mu_;              // one start at a time; FinishWriting closes
  bool snapshots_closed_ = false;             // snapshot_start_mu_
  const char* snapshot_what_ = "snapshot";    // snapshot_start_mu_: the one being written
  uint64_t snapshot_since_ns_ = 0;            // snapshot_mu_
  bool header_complete_ = false;              // writer thread
  std::atomic<bool> snapshot_busy_{false};
  std::thread snapshot_thread_;
  std::mutex snapshot_mu_;
  std::condition_variable snapshot_cv_;
  bool snapshot_hurry_ = false;  // snapshot_mu_: the session ends, write now
  // A capture's top-down (snapshot_mu_): the writer's choice made, how many launches it waits for,
  // and how many profiled launches were queued since the choice.
  bool capture_choice_made_ = false;
  uint64_t capture_launches_expected_ = 0;
  size_t capture_kernels_chosen_ = 0;
  bool capture_top_down_ = false;  // a capture's choice is the next one
  uint64_t profiled_since_choice_ = 0;
  std::optional<std::pair<v1::Header, core::FlightRing::Snapshot>> snapshot_taken_;  // snapshot_mu_
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_TRACE_PIPELINE_H_
