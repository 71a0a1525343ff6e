// The collector's capture room, and the home of every trigger: when activity is recorded, when a
// snapshot or a capture is taken, and the top-down's choice.
//
// Every trigger (trigger_commands.h lists them with their sources) reaches the session as a typed
// command, run by Execute, checked against one state machine for the timeline window
// (window_states.h). Three ways in, by what the source can afford:
//   Submit   queues the command for the control thread, which runs the queue in order, and waits
//            for its outcome (the C and C++ API, the control socket, MarkStep, a slow request);
//   Post     queues it without waiting (the writer thread's detectors: the NVTX step range, the
//            idle GPU; the writer never waits on another thread's turn);
//   RunNow   runs it on the calling thread (CUPTI's callbacks, cudaProfilerStart/Stop and the NVTX
//            range, whose call must return with recording switched; the session's start and end;
//            a failed write). Those callers are inside CUPTI, which the control thread also calls:
//            waiting on it there could deadlock.
//
// A window opens at start, after --delay, at cudaProfilerStart (cuProfilerStart) or the NVTX
// range's start; it closes after --duration, at cudaProfilerStop or the range's end, or at the
// session's end. Opening enables the session's activity kinds, closing disables them; each edge is
// queued for the trace. The control thread runs the command queue and the timers, drives the
// GPU-counter room with the window, hands partly filled buffers to the writer every flush period
// (CUPTI's own periodic flush delivers only full ones, so a quiet program's records would otherwise
// reach the file only at exit, and a crash would lose them), and queues the top-down's choice a
// moment after its window closed.
#ifndef CUSCOPE_LIB_CUPTI_CAPTURE_CONTROLLER_H_
#define CUSCOPE_LIB_CUPTI_CAPTURE_CONTROLLER_H_

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "lib/settings/config.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/core/nvtx_capture_watch.h"
#include "lib/cupti/activity_selection.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/cupti_attachment.h"
#include "lib/cupti/kernel_metrics_collector.h"
#include "lib/cupti/sampling_controller.h"
#include "lib/cupti/trace_pipeline.h"
#include "lib/cupti/trigger_commands.h"
#include "lib/cupti/window_states.h"
#include "lib/monitor/duty_cycle.h"

namespace cuscope::cupti {

class CaptureController {
 public:
  CaptureController(const settings::Config& config, CuptiApi& cupti, ActivitySelection selection,
                    TracePipeline& pipeline, SamplingController& sampling, std::function<void(const std::string&)> warn);
  ~CaptureController();
  CaptureController(const CaptureController&) = delete;
  CaptureController& operator=(const CaptureController&) = delete;

  // The trigger's command, run by the control thread in its turn; its outcome, or
  // DeadlineExceeded when the control thread has not answered within kAnswerWait (the command
  // still runs), or FailedPrecondition once the session is ending.
  static constexpr auto kAnswerWait = std::chrono::seconds(10);
  absl::Status Submit(TriggerCommand command);
  // The same without waiting for the outcome (a refusal is for the command's own line to say).
  void Post(TriggerCommand command);
  // Runs the command on this thread, now. OpenWindow{kSession} at start: a failure is the
  // caller's. Other OpenWindows that fail say one line; the program goes on without profiling.
  absl::Status RunNow(const TriggerCommand& command);

  // Whether the session's windows open after the program starts (a delay, cudaProfilerStart, an
  // NVTX range) with GPU counters or kernel metrics: then the kinds go on at start and stay on
  // (HoldKinds), and the trace keeps only the windows' records.
  bool HoldsKinds() const { return holds_kinds_; }
  // At start, when HoldsKinds: enables the kinds before the program's first CUDA call. Enabled
  // later, with a profiler started in the window, CUPTI gave the window's kernels one correlation
  // id or lost them on the H200 (activity_selection.h).
  absl::Status HoldKinds();
  // cudaProfilerStart/Stop and their driver twins; `api_exit` is the callback site.
  void OnProfilerStart(bool api_exit);
  void OnProfilerStop(bool api_enter);
  // An NVTX call, for `-c nvtx`: the watched range's start opens the window, its end closes it.
  void OnNvtxCall(CUpti_CallbackId cbid, const CUpti_NvtxData& data);
  void OnContextCreated();
  void MarkContextSeen() { context_seen_.store(true); }
  // At a CUDA call of the program's, while SamplingController::AwaitingProgramCall: the counters'
  // first set-up on this thread. Once done, the control thread calls `stop_watching` (set before
  // the control thread starts) to take the calls' callbacks back.
  void OnProgramCall();
  void SetStopWatchingProgramCalls(std::function<void()> stop_watching) { stop_watching_ = std::move(stop_watching); }

  // On the writer thread: the top-down's hottest kernels, named in one line and handed to the
  // kernel metrics as their only targets, `launches_each` launches of each (0: none, the metrics
  // could not start).
  void HotKernelsChosen(std::vector<core::HotKernelChoice> chosen, uint64_t launches_each,
                        const std::string& metrics_request, KernelMetricsCollector* metrics);
  // A monitor-mode capture's top-down: while `paused`, the GPU counters over time are given back
  // (the Range Profiler needs them); waits until they are (at most a few seconds: false then).
  bool PauseCountersForKernelMetrics(bool paused);

  // Fails (the thread could not be created) without throwing.
  absl::Status StartControlThread();
  void StopControlThread();
  // After StopControlThread: the top-down's choice, when its window closed and the control thread
  // had not made it yet (the program ended within the settling time). Queued behind the window's
  // records, so the trace says which kernels were hot and that they did not launch again.
  void ChooseHotKernelsAtStop();

  // Monitor mode's duty cycle (lib/monitor/duty_cycle.h), when the session records in windows:
  // what it does now. Null without one.
  const monitor::DutyCycle* duty_cycle() const { return duty_.get(); }
  // Something needs every record now (TracePipeline::Hooks::every_record_wanted): the control
  // thread turns recording on at once instead of at the next window.
  void WakeForEveryRecord() {
    if (duty_ == nullptr) return;
    duty_wake_.store(true);
    Wake();
  }

  // A launch was replayed for kernel metrics while recording goes on (a monitor-mode capture's
  // top-down): its kernel record never completes, so CUPTI's buffers would hold every later record
  // back until the session's end (on an H100 in a launch storm: no kernel record for the 10 s after
  // the top-down, then 1.1 million dropped at the buffer cap). The control thread hands them over
  // (a forced flush) at once; what comes without timestamps is the replayed launch and the few
  // kernels launched since, still running.
  void HandOverHeldRecordsSoon() {
    hand_over_due_.store(true);
    Wake();
  }

  // A CUDA graph's instantiation begins (`starting`) or ends, on the program's thread. CUPTI
  // records a graph's kernels as its instantiation found recording: at every launch when it was
  // on, never when it was off (bench/gpu/duty_toggle_probe.sh). So under the duty cycle an
  // instantiation needs every record: the control thread turns recording on, and the program's
  // thread waits for that (at most kGraphInstantiationWait: then the graph goes unrecorded).
  void OnGraphInstantiation(bool starting);

  // Under a duty cycle that detaches CUPTI between its windows (CUSCOPE_DUTY_DETACH): the switch
  // detaches CUPTI after a window closes and attaches it before the next opens. Set before the
  // control thread starts; `attachment` outlives this object.
  void DetachBetweenWindows(CuptiAttachment* attachment) { attachment_ = attachment; }

  WindowState state() const { return state_.load(); }
  bool recording() const { return state_.load(std::memory_order_relaxed) == WindowState::kOpen; }

 private:
  struct PendingCommand {
    TriggerCommand command;
    std::shared_ptr<std::promise<absl::Status>> answer;  // null: posted, nobody waits
  };
  // The one place a command is carried out, whichever way it came in.
  absl::Status Execute(const TriggerCommand& command);
  // Moves the window by the state machine's table; the state it left, or nullopt when the event
  // changes nothing.
  std::optional<WindowState> Move(WindowEvent event);
  bool KeptOpen();
  absl::Status OpenSessionWindow();
  absl::Status OpenWindowFor(const std::string& reason);
  void CloseWindowFor(const std::string& reason);
  void EndSessionWindow();
  void StopRecordingForGood();
  std::function<void(const absl::Status&, const std::string&)> SayWritten(std::string why) const;
  absl::Status StartSnapshot(const Snapshot& snapshot);
  absl::Status StartCapture(const Capture& capture);
  void RunQueuedCommands(std::unique_lock<std::mutex>& lock);
  // `program_started`: the window opens after the program's first CUDA call (a delay, a
  // cudaProfilerStart), not with the session. Called after the move to kOpen.
  absl::Status EnableKinds(bool program_started);
  void SayStartedLate();
  // After a move that left kOpen: the kinds off, or with held kinds only the span closed (`next`
  // kClosed).
  void DisableKinds(WindowState next);
  void QueueEdge(bool open, const std::string& reason);
  void Wake();
  SamplingController::Conditions SamplingConditions() const;
  void QueueHotKernelChoice();
  void ControlLoop();
  // The duty cycle's switch: the kinds on or off while the session's window stays open. False once
  // the window closed for good (the session ends or writing failed): nothing is switched on again.
  bool SetSampleRecording(bool on, double weight);
  // On the control thread: CUPTI attached (again, if detached) and kept for good, for `what`
  // (a capture's top-down). An error says why it could not be.
  absl::Status KeepCuptiAttached(const std::string& what);
  // The duty cycle's switch, its CUPTI side: attach before a window opens, detach after it closed.
  bool AttachForWindow();
  bool DetachAfterWindow();  // false: the detach failed (the line is said)
  // An instantiation is in progress (and began less than kGraphInstantiationHold ago).
  bool GraphBeingInstantiated() const;

  const settings::Config& config_;
  CuptiApi& cupti_;
  const ActivitySelection selection_;
  TracePipeline& pipeline_;
  SamplingController& sampling_;
  std::function<void(const std::string&)> warn_;

  std::atomic<WindowState> state_{WindowState::kWaiting};
  std::atomic<bool> late_profilers_said_{false};
  const bool holds_kinds_;
  std::atomic<bool> kinds_held_{false};  // HoldKinds succeeded: windows do not toggle the kinds
  std::atomic<bool> stop_recording_{false};
  std::unique_ptr<core::NvtxCaptureWatch> nvtx_watch_;  // with capture_range "nvtx"
  std::atomic<bool> context_seen_{false};
  std::function<void()> stop_watching_;
  std::atomic<bool> stop_watching_due_{false};
  // When the top-down's timeline window closed (CUPTI time; 0 = not yet). A window closes once for
  // the top-down: reopening it later records more timeline but chooses nothing new.
  std::atomic<uint64_t> top_down_closed_at_{0};
  bool top_down_queued_ = false;  // control thread only
  std::atomic<bool> counters_paused_{false};  // a capture's kernel metrics are being collected
  std::unique_ptr<monitor::DutyCycle> duty_;    // stepped by the control thread
  std::atomic<bool> duty_wake_{false};
  std::atomic<bool> hand_over_due_{false};
  std::atomic<bool> sample_on_{true};  // the duty cycle's kinds are on (or no duty cycle)
  std::atomic<int> graph_instantiations_{0};  // in progress on the program's threads
  std::atomic<int64_t> graph_instantiation_since_ns_{0};  // the latest one's start (steady clock)
  std::atomic<bool> graph_wait_said_{false};
  std::atomic<bool> sample_failed_{false};  // the duty cycle could not turn recording back on
  CuptiAttachment* attachment_ = nullptr;    // DetachBetweenWindows

  std::thread thread_;
  std::mutex control_mu_;
  std::condition_variable control_cv_;
  bool control_exit_ = false;  // control_mu_
  std::deque<PendingCommand> commands_;  // control_mu_
  std::atomic<std::thread::id> control_thread_id_{};  // set as the control thread begins
  const pid_t pid_ = ::getpid();                      // the profiled process (not a fork of it)
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CAPTURE_CONTROLLER_H_
