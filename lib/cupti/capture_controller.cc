#include "lib/cupti/capture_controller.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <pthread.h>
#include <unistd.h>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/core/kernel_selection.h"
#include "lib/core/output_name.h"
#include "lib/cupti/nvtx_capture.h"

namespace cuscope::cupti {
namespace {

// How long a detach waits for a program thread's runtime call to carry it (cupti_attachment.h):
// a program that makes none for this long gets no detach in this gap, and the control thread's
// timers wait at most this long.
constexpr std::chrono::milliseconds kDetachWait{50};

}  // namespace

CaptureController::CaptureController(const settings::Config& config, CuptiApi& cupti, ActivitySelection selection,
                                     TracePipeline& pipeline, SamplingController& sampling,
                                     std::function<void(const std::string&)> warn)
    : config_(config),
      cupti_(cupti),
      selection_(std::move(selection)),
      pipeline_(pipeline),
      sampling_(sampling),
      warn_(std::move(warn)),
      holds_kinds_((config_.gpu_metrics || !config_.metrics.empty()) &&
                   (config_.capture_range != "none" || config_.delay_seconds > 0)) {
  if (config_.capture_range == "nvtx") nvtx_watch_ = std::make_unique<core::NvtxCaptureWatch>(config_.nvtx_capture);
  if (config_.samples_by_duty_cycle()) {
    monitor::DutyOptions options;
    options.interval_ns = static_cast<uint64_t>(config_.monitor_interval_ms) * 1'000'000ull;
    options.fixed_duty = config_.duty_cycle;
    options.budget = config_.overhead_budget;
    options.windows_per_interval = config_.duty_windows;
    options.seed = static_cast<uint64_t>(::getpid());
    // Past CUPTI's flush period (a buffer's records come at least that often when nothing holds
    // them back), with the control thread's own lateness on top.
    options.hand_over_after_ns = (static_cast<uint64_t>(config_.flush_period_ms) + 250) * 1'000'000ull;
    duty_ = std::make_unique<monitor::DutyCycle>(
        options,
        monitor::DutyCycle::Hooks{
            .record = [this](bool on, double weight) { return SetSampleRecording(on, weight); },
            .every_record_wanted = [this] { return pipeline_.wants_every_record() || GraphBeingInstantiated(); },
            .calls = [this] { return pipeline_.timed_calls_queued(); },
            .kernel_records = [this] { return pipeline_.kernel_records_seen(); },
            .launches = [this] { return pipeline_.timed_launches_queued(); },
            // Recording is off: what comes without timestamps is a kernel still running since
            // the last window, which has had the whole gap to finish.
            .hand_over = [this] { (void)cupti_.FlushAll(/*forced=*/true); },
            .records_missing =
                [this](uint64_t launches) {
                  warn_(absl::StrCat("CUPTI gave no kernel record for ", launches,
                                     " kernel launches timed in the duty cycle's windows, after switching recording off "
                                     "and on, and a forced flush brought none: the monitor's kernel figures since then "
                                     "are missing; recording all the time from now on"));
                }},
        std::chrono::steady_clock::now());
  }
}

CaptureController::~CaptureController() { StopControlThread(); }

// ---- Commands ----------------------------------------------------------------------------------

absl::Status CaptureController::Submit(TriggerCommand command) {
  // A forked child has no control thread (and may hold a copy of its lock as it was at the fork).
  if (::getpid() != pid_) {
    return absl::FailedPreconditionError(
        "this process is a fork of the profiled one: the session's requests go to the parent");
  }
  const char* name = TriggerCommandName(command);
  auto answer = std::make_shared<std::promise<absl::Status>>();
  std::future<absl::Status> outcome = answer->get_future();
  {
    std::lock_guard<std::mutex> lock(control_mu_);
    if (control_exit_) return absl::FailedPreconditionError("the cuscope session is ending");
    // The control thread itself (a command's hook asking for another) runs it in place: waiting
    // for its own turn would never end.
    if (std::this_thread::get_id() == control_thread_id_.load()) answer.reset();
    if (answer != nullptr) commands_.push_back({std::move(command), answer});
  }
  if (answer == nullptr) return Execute(command);
  control_cv_.notify_all();
  if (outcome.wait_for(kAnswerWait) != std::future_status::ready) {
    return absl::DeadlineExceededError(
        absl::StrCat("the session's control thread did not take the ", name, " request within ",
                     std::chrono::duration_cast<std::chrono::seconds>(kAnswerWait).count(),
                     " s; it runs when the thread gets to it"));
  }
  return outcome.get();
}

void CaptureController::Post(TriggerCommand command) {
  if (::getpid() != pid_) return;
  {
    std::lock_guard<std::mutex> lock(control_mu_);
    if (control_exit_) return;
    commands_.push_back({std::move(command), nullptr});
  }
  control_cv_.notify_all();
}

absl::Status CaptureController::RunNow(const TriggerCommand& command) { return Execute(command); }

absl::Status CaptureController::Execute(const TriggerCommand& command) {
  // One overload per command: a command added to the variant without its execution does not compile.
  struct Executor {
    CaptureController& c;
    absl::Status operator()(const OpenWindow& w) const {
      return w.source == TriggerSource::kSession ? c.OpenSessionWindow() : c.OpenWindowFor(w.reason);
    }
    absl::Status operator()(const CloseWindow& w) const {
      c.CloseWindowFor(w.reason);
      return absl::OkStatus();
    }
    absl::Status operator()(const EndSession&) const {
      c.EndSessionWindow();
      return absl::OkStatus();
    }
    absl::Status operator()(const StopRecording&) const {
      c.StopRecordingForGood();
      return absl::OkStatus();
    }
    absl::Status operator()(const OpenTraceWindow& t) const { return c.pipeline_.OpenTraceWindow(t.seconds); }
    absl::Status operator()(const CloseTraceWindow&) const { return c.pipeline_.CloseTraceWindow(); }
    absl::Status operator()(const Snapshot& snapshot) const { return c.StartSnapshot(snapshot); }
    absl::Status operator()(const Capture& capture) const { return c.StartCapture(capture); }
  };
  return std::visit(Executor{*this}, command);
}

void CaptureController::RunQueuedCommands(std::unique_lock<std::mutex>& lock) {
  while (!commands_.empty()) {
    PendingCommand next = std::move(commands_.front());
    commands_.pop_front();
    lock.unlock();  // never hold a lock of ours while calling into CUPTI
    absl::Status outcome = Execute(next.command);
    // Moved, not copied: a copy would share the message's storage between this thread and the
    // caller's, released by whichever lets go last, an order ThreadSanitizer cannot see inside
    // the (uninstrumented) private abseil.
    if (next.answer != nullptr) next.answer->set_value(std::move(outcome));
    lock.lock();
  }
}

// ---- Snapshots and captures --------------------------------------------------------------------

// What a snapshot or capture says once written: its line, then why it was taken (when known).
std::function<void(const absl::Status&, const std::string&)> CaptureController::SayWritten(std::string why) const {
  return [warn = warn_, why = std::move(why)](const absl::Status&, const std::string& line) {
    warn(why.empty() ? line : absl::StrCat(line, "; ", why));
  };
}

absl::Status CaptureController::StartSnapshot(const Snapshot& snapshot) {
  if (!pipeline_.flight_recording()) {
    return absl::FailedPreconditionError("a snapshot needs flight mode (CUSCOPE_MODE=flight)");
  }
  if (!(snapshot.after_seconds >= 0) || snapshot.after_seconds > 3600) {
    return absl::InvalidArgumentError("the seconds after a snapshot's request must be from 0 to 3600");
  }
  std::string target = snapshot.path;
  if (target.empty()) {
    if (config_.output.empty()) {
      return absl::InvalidArgumentError("no path for the snapshot: name one, or set the session's output");
    }
    // Each snapshot a file of its own: the lowest free number when the name has none.
    const std::string pattern =
        absl::StrContains(config_.output, "%n") ? config_.output : absl::StrCat(config_.output, "_snapshot%n");
    auto expanded = core::ExpandOutputName(pattern, core::CurrentProcessOutputContext());
    if (!expanded.ok()) return expanded.status();
    target = *expanded;
  }
  return pipeline_.RequestSnapshot(target, snapshot.after_seconds, snapshot.force_overwrite, SayWritten(snapshot.why));
}

absl::Status CaptureController::StartCapture(const Capture& capture) {
  // The top-down's replays come after the capture's window, when the duty cycle would detach.
  if (capture.top_down.kernels > 0) {
    if (auto st = KeepCuptiAttached("a capture's top-down"); !st.ok()) return st;
  }
  return pipeline_.RequestCapture(capture.path, capture.seconds, capture.force_overwrite, capture.top_down,
                                  SayWritten(capture.why));
}

// ---- The timeline window -----------------------------------------------------------------------

std::optional<WindowState> CaptureController::Move(WindowEvent event) {
  WindowState from = state_.load();
  while (true) {
    const std::optional<WindowState> next = NextWindowState(from, event);
    if (!next) return std::nullopt;
    if (state_.compare_exchange_weak(from, *next)) return from;
  }
}

absl::Status CaptureController::EnableKinds(bool program_started) {
  if (kinds_held_.load()) {
    pipeline_.OpenTimelineSpan(cupti_.Timestamp());
    return absl::OkStatus();
  }
  if (auto st = selection_.Enable(cupti_); !st.ok()) return st;
  // Started late and with a profiler to come, CUPTI can mix up the window's correlation ids or lose
  // its kernels (activity_selection.h): said once, and the analyzer flags a stuck id.
  const bool profilers = config_.gpu_metrics || !config_.metrics.empty();
  if (program_started && profilers && !late_profilers_said_.exchange(true)) SayStartedLate();
  return absl::OkStatus();
}

// Only a session that starts after the program's first CUDA call gets here with a profiler: one
// injected, or linked and started first, enables its kinds before that call.
void CaptureController::SayStartedLate() {
  warn_("this session starts after the program's first CUDA call with GPU counters or kernel metrics: CUPTI may "
        "give its kernels one correlation id or lose them (seen on the H200, CUDA 13.0); a session started before "
        "the program's first CUDA call (injected, or linked and started first) is reliable");
}

absl::Status CaptureController::HoldKinds() {
  if (auto st = selection_.Enable(cupti_); !st.ok()) return st;
  if (cupti_.DriverHasContext() && !late_profilers_said_.exchange(true)) SayStartedLate();
  pipeline_.FilterToTimelineSpans();
  kinds_held_.store(true);
  return absl::OkStatus();
}

void CaptureController::DisableKinds(WindowState next) {
  // Held kinds stay on until the end (or a failed write); the span closes instead.
  if (kinds_held_.load() && next == WindowState::kClosed && !stop_recording_.load()) {
    pipeline_.CloseTimelineSpan(cupti_.Timestamp());
    return;
  }
  selection_.Disable(cupti_);
}

void CaptureController::QueueEdge(bool open, const std::string& reason) {
  pipeline_.QueueWindow(open, cupti_.Timestamp(), reason, v1::WINDOW_KIND_TIMELINE);
}

void CaptureController::Wake() {
  std::lock_guard<std::mutex> lock(control_mu_);
  control_cv_.notify_all();
}

// The window is moved to kOpen before its kinds go on (the move is what makes one opener of two),
// so a close, a failed write or the session's end can come in between, find nothing on yet to turn
// off, and move on. Checked once the kinds are on: if the window moved meanwhile, the opener turns
// them off again (or closes the span it opened) and queues no edge.
bool CaptureController::KeptOpen() {
  const WindowState now = state_.load();
  if (now == WindowState::kOpen) return true;
  DisableKinds(now);
  return false;
}

absl::Status CaptureController::OpenSessionWindow() {
  // Under a duty cycle, the session's window is its first recording window too (its time taken
  // before the kinds go on: no record comes before its window).
  const uint64_t sample_on = cupti_.Timestamp();
  const std::optional<WindowState> from = Move(WindowEvent::kOpen);
  if (!from) return absl::FailedPreconditionError("the session's window is open or ended already");
  // A session linked in and started after the program's first CUDA call starts late too.
  if (auto st = EnableKinds(/*program_started=*/cupti_.DriverHasContext()); !st.ok()) {
    WindowState open = WindowState::kOpen;
    state_.compare_exchange_strong(open, *from);
    return st;
  }
  if (!KeptOpen()) return absl::OkStatus();
  if (duty_ != nullptr) pipeline_.QueueSampleEdge(true, sample_on);
  QueueEdge(true, "session");
  return absl::OkStatus();
}

absl::Status CaptureController::OpenWindowFor(const std::string& reason) {
  const std::optional<WindowState> from = Move(WindowEvent::kOpen);
  if (!from) return absl::OkStatus();  // open already, or the session is over
  if (auto st = EnableKinds(/*program_started=*/true); !st.ok()) {
    WindowState open = WindowState::kOpen;
    state_.compare_exchange_strong(open, *from);
    warn_(absl::StrCat("cannot start collection: ", st.message(), "; profiling is off"));
    return st;
  }
  if (!KeptOpen()) return absl::OkStatus();
  QueueEdge(true, reason);
  if (config_.gpu_metrics) Wake();  // to start the GPU counters
  return absl::OkStatus();
}

void CaptureController::CloseWindowFor(const std::string& reason) {
  if (!Move(WindowEvent::kClose)) return;
  DisableKinds(WindowState::kClosed);
  QueueEdge(false, reason);
  uint64_t expected = 0;
  if (config_.top_down_kernels > 0 && top_down_closed_at_.compare_exchange_strong(expected, cupti_.Timestamp())) {
    Wake();
  } else if (config_.gpu_metrics) {
    Wake();  // to stop the GPU counters
  }
}

void CaptureController::EndSessionWindow() {
  if (Move(WindowEvent::kEnd) == WindowState::kOpen) {
    DisableKinds(WindowState::kEnded);
    QueueEdge(false, "end");
  } else if (kinds_held_.load()) {
    selection_.Disable(cupti_);  // held on between windows: off at the end
  }
  kinds_held_.store(false);
}

void CaptureController::StopRecordingForGood() {
  Wake();  // the GPU counters stop too
  stop_recording_.store(true);
  if (Move(WindowEvent::kStop) == WindowState::kOpen || kinds_held_.load()) selection_.Disable(cupti_);
  kinds_held_.store(false);
}

void CaptureController::OnProfilerStart(bool api_exit) {
  if (api_exit) (void)RunNow(OpenWindow{TriggerSource::kProfilerApi, "cudaProfilerStart"});
}

void CaptureController::OnProfilerStop(bool api_enter) {
  if (api_enter) (void)RunNow(CloseWindow{TriggerSource::kProfilerApi, "cudaProfilerStop"});
}

void CaptureController::OnNvtxCall(CUpti_CallbackId cbid, const CUpti_NvtxData& data) {
  if (nvtx_watch_ == nullptr) return;
  switch (ObserveNvtxCall(*nvtx_watch_, cbid, data, static_cast<uint64_t>(::pthread_self()))) {
    case core::NvtxCaptureWatch::Edge::kOpen:
      (void)RunNow(OpenWindow{TriggerSource::kNvtxRange, absl::StrCat("NVTX range ", nvtx_watch_->name())});
      break;
    case core::NvtxCaptureWatch::Edge::kClose:
      (void)RunNow(CloseWindow{TriggerSource::kNvtxRange, absl::StrCat("NVTX range ", nvtx_watch_->name(), " ended")});
      break;
    case core::NvtxCaptureWatch::Edge::kNone:
      break;
  }
}

void CaptureController::OnProgramCall() {
  if (!sampling_.OnProgramCall(SamplingConditions())) return;
  stop_watching_due_.store(true);
  Wake();
}

void CaptureController::OnContextCreated() {
  if (!context_seen_.exchange(true) && config_.gpu_metrics) Wake();
}

// ---- The top-down's choice ---------------------------------------------------------------------

void CaptureController::HotKernelsChosen(std::vector<core::HotKernelChoice> chosen, uint64_t launches_each,
                                         const std::string& metrics_request, KernelMetricsCollector* metrics) {
  if (chosen.empty()) {
    warn_("top-down: no kernel ran in the timeline window; no kernel metrics to collect");
  } else {
    std::string names;
    for (const auto& k : chosen) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", core::FunctionBaseName(core::DemangleName(k.name)), " (",
                      k.shape.grid[0], "x", k.shape.grid[1], "x", k.shape.grid[2], " / ", k.shape.block[0], "x",
                      k.shape.block[1], "x", k.shape.block[2], ")");
    }
    warn_(launches_each == 0
              ? absl::StrCat("top-down: the hottest kernels were ", names, "; no kernel metrics to collect")
              : absl::StrCat("top-down: collecting ", metrics_request, " on the next ", launches_each, " launches of ",
                             names));
  }
  if (metrics != nullptr) metrics->SetTargets(std::move(chosen), launches_each);
}

// Queues the top-down's choice behind the window's records. A default flush hands over the buffers
// whose records are all complete; kernels still running when it is called are not counted (a
// forced flush would hand them over without timestamps). The control thread waits a moment after
// the window closed first, so only a kernel longer than that is missed.
// With the kinds held, the program's kernels after the window keep every buffer incomplete, so a
// default flush handed over nothing of the window (on the H200 the choice found no kernel in 2 of
// 7 late top-down runs): the flush is forced. What it hands over without timestamps is work that
// started after the window, which the trace leaves out anyway.
void CaptureController::QueueHotKernelChoice() {
  (void)cupti_.FlushAll(kinds_held_.load());
  pipeline_.QueueHotKernelChoice(config_.top_down_kernels, config_.top_down_launches);
}

bool CaptureController::SetSampleRecording(bool on, double weight) {
  // No lock against the window's end (it may come from a CUPTI callback, and CUPTI is called here):
  // the state is checked after switching on too, and what the end turned off stays off.
  if (state_.load() != WindowState::kOpen || stop_recording_.load()) return false;
  if (on) {
    if (!AttachForWindow()) return false;
    const uint64_t time = cupti_.Timestamp();
    if (auto st = selection_.Enable(cupti_); !st.ok()) {
      warn_(absl::StrCat("the duty cycle could not turn recording back on: ", st.message(), "; profiling is off"));
      sample_failed_.store(true);
      return false;
    }
    if (state_.load() != WindowState::kOpen || stop_recording_.load()) {
      selection_.Disable(cupti_);
      return false;
    }
    sample_on_.store(true);
    pipeline_.QueueSampleEdge(true, time, weight);
  } else {
    // The window ends as the switch off begins: kernel records stop a few microseconds into it,
    // and switching off takes ~0.3-0.45 ms (H100), which the window would otherwise count as
    // recorded time without records (bench/gpu/duty_toggle_probe.sh).
    const uint64_t time = cupti_.Timestamp();
    sample_on_.store(false);
    // A graph being instantiated keeps the kinds on (OnGraphInstantiation): the window still ends
    // here, and the control thread, woken, opens one recording everything. Checked after
    // sample_on_ went false, so that this thread or the instantiating one sees the other.
    bool kinds_off = false;
    if (GraphBeingInstantiated()) {
      sample_on_.store(true);
      duty_wake_.store(true);
    } else {
      selection_.Disable(cupti_);
      kinds_off = true;
    }
    pipeline_.QueueSampleEdge(false, time, weight);
    if (kinds_off && !DetachAfterWindow()) return false;
  }
  pipeline_.Wake();
  return true;
}

bool CaptureController::AttachForWindow() {
  if (attachment_ == nullptr) return true;
  if (attachment_->state() == AttachmentState::kFailed) return false;  // said as it failed
  if (attachment_->state() != AttachmentState::kDetached) return true;
  if (auto st = attachment_->Attach(); !st.ok()) {
    warn_(absl::StrCat("CUPTI could not be attached again for the duty cycle's next window: ", st.message(),
                       "; profiling is off"));
    sample_failed_.store(true);
    return false;
  }
  return true;
}

bool CaptureController::DetachAfterWindow() {
  if (attachment_ == nullptr) return true;
  pipeline_.Wake();  // the window's edge and last buffers, walked before the detach (its drain)
  if (attachment_->Detach(kDetachWait) != AttachmentState::kFailed) return true;
  warn_("CUPTI could not be detached between the duty cycle's windows (cuptiFinalize failed); profiling is off");
  sample_failed_.store(true);
  return false;
}

absl::Status CaptureController::KeepCuptiAttached(const std::string& what) {
  if (attachment_ == nullptr) return absl::OkStatus();
  if (attachment_->state() == AttachmentState::kDetached) {
    // Attach and Detach belong to the control thread (cupti_attachment.h).
    if (std::this_thread::get_id() != control_thread_id_.load()) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, " needs CUPTI, detached between the duty cycle's windows now; ask again from the control "
                             "socket or the API"));
    }
    if (auto st = attachment_->Attach(); !st.ok()) {
      warn_(absl::StrCat("CUPTI could not be attached again for ", what, ": ", st.message(), "; profiling is off"));
      sample_failed_.store(true);
      return absl::InternalError(absl::StrCat("CUPTI could not be attached again for ", what, ": ", st.message()));
    }
  }
  if (!attachment_->Pin()) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, " needs CUPTI, which could not be kept attached (", AttachmentStateName(attachment_->state()), ")"));
  }
  warn_(absl::StrCat("CUPTI stays attached from now on: ", what, " needs it throughout"));
  return absl::OkStatus();
}

// An instantiation whose end never came (CUPTI gave no CREATED for a failed one) holds recording
// on for this long at most.
constexpr auto kGraphInstantiationHold = std::chrono::seconds(10);

bool CaptureController::GraphBeingInstantiated() const {
  if (graph_instantiations_.load() <= 0) return false;
  const int64_t since = graph_instantiation_since_ns_.load();
  return std::chrono::steady_clock::now().time_since_epoch() - std::chrono::nanoseconds(since) < kGraphInstantiationHold;
}

void CaptureController::OnGraphInstantiation(bool starting) {
  if (duty_ == nullptr) return;
  if (!starting) {
    // An instantiation whose start came before the callbacks were on has nothing to end.
    int n = graph_instantiations_.load();
    while (n > 0 && !graph_instantiations_.compare_exchange_weak(n, n - 1)) {
    }
    return;
  }
  graph_instantiation_since_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
  graph_instantiations_.fetch_add(1);
  if (sample_on_.load() || !recording() || sample_failed_.load()) return;
  // Instantiations are rare (a graph is made once and launched many times): waiting here for the
  // switch (~0.5 ms on the H100) costs the program nothing it would notice.
  constexpr auto kGraphInstantiationWait = std::chrono::milliseconds(50);
  WakeForEveryRecord();
  const auto deadline = std::chrono::steady_clock::now() + kGraphInstantiationWait;
  while (!sample_on_.load() && recording() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (!sample_on_.load() && recording() && !graph_wait_said_.exchange(true)) {
    warn_("a CUDA graph was instantiated before the duty cycle could turn recording on (50 ms): its kernels are not "
          "recorded");
  }
}

// ---- The control thread ------------------------------------------------------------------------

SamplingController::Conditions CaptureController::SamplingConditions() const {
  return {.possible = context_seen_.load() && top_down_closed_at_.load() == 0 && !counters_paused_.load() &&
                      !pipeline_.failed(),
          .window_open = recording()};
}

bool CaptureController::PauseCountersForKernelMetrics(bool paused) {
  counters_paused_.store(paused);
  Wake();  // the control thread stops or restarts the sampler
  if (!paused || !config_.gpu_metrics) return true;
  // Stopping a sampler takes its last decode: well under a second on the H200.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    const SamplingController::State st = sampling_.state();
    if (st == SamplingController::State::kIdle || st == SamplingController::State::kOff) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  warn_("the GPU counters over time did not stop within 5 s; the capture's top-down collects no kernel metrics");
  counters_paused_.store(false);
  Wake();
  return false;
}

absl::Status CaptureController::StartControlThread() {
  try {
    thread_ = std::thread(&CaptureController::ControlLoop, this);
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot start the control thread: ", e.what()));
  }
  return absl::OkStatus();
}

void CaptureController::StopControlThread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(control_mu_);
    control_exit_ = true;
  }
  control_cv_.notify_all();
  thread_.join();
  // What was submitted and not run: its caller hears that the session is ending; posted ones go.
  std::lock_guard<std::mutex> lock(control_mu_);
  for (PendingCommand& pending : commands_) {
    if (pending.answer != nullptr) {
      pending.answer->set_value(absl::FailedPreconditionError("the cuscope session is ending"));
    }
  }
  commands_.clear();
}

void CaptureController::ChooseHotKernelsAtStop() {
  if (config_.top_down_kernels == 0 || top_down_queued_ || top_down_closed_at_.load() == 0) return;
  top_down_queued_ = true;
  QueueHotKernelChoice();
}

void CaptureController::ControlLoop() {
  control_thread_id_.store(std::this_thread::get_id());
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto seconds = [](double v) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(v)); };
  const bool gated = config_.capture_range != "none";
  bool open_pending = !gated && config_.delay_seconds > 0;
  bool close_pending = !gated && config_.duration_seconds > 0;
  const auto open_at = start + seconds(config_.delay_seconds);
  const auto close_at = open_at + seconds(config_.duration_seconds);
  const auto period = std::chrono::milliseconds(config_.flush_period_ms);
  // How long the top-down lets the window's last kernels finish before choosing.
  constexpr auto kSettle = std::chrono::milliseconds(100);
  std::optional<Clock::time_point> choose_at;
  auto next_flush = start + period;
  const auto top_down_due = [this, &choose_at] {
    return !choose_at && !top_down_queued_ && top_down_closed_at_.load() != 0;
  };
  // Preparing the GPU counters ahead holds this thread (~0.4 s): not when the window opens sooner.
  static constexpr auto kPrepareLead = std::chrono::milliseconds(600);
  const auto prepare_ahead = [&open_pending, &open_at](Clock::time_point now) {
    return !(open_pending && open_at - now < kPrepareLead);
  };
  // The duty cycle's next switch (never without one; at once with one: its first window).
  auto duty_at = duty_ != nullptr ? start : Clock::time_point::max();
  const auto woken = [this, &top_down_due, &prepare_ahead] {
    return control_exit_ || !commands_.empty() || top_down_due() || stop_watching_due_.load() || duty_wake_.load() ||
           hand_over_due_.load() ||
           sampling_.Due(SamplingConditions(), prepare_ahead(Clock::now()));
  };
  std::unique_lock<std::mutex> lock(control_mu_);
  while (true) {
    auto wake = next_flush;
    if (open_pending) wake = std::min(wake, open_at);
    if (close_pending) wake = std::min(wake, close_at);
    if (choose_at) wake = std::min(wake, *choose_at);
    wake = std::min(wake, duty_at);
    control_cv_.wait_until(lock, wake, woken);
    if (control_exit_) return;
    // The triggers' commands first, in the order they came (each with the lock let go).
    RunQueuedCommands(lock);
    if (control_exit_) return;
    const auto now = Clock::now();
    lock.unlock();  // never hold a lock of ours while calling into CUPTI
    if (open_pending && now >= open_at) {
      open_pending = false;
      (void)Execute(OpenWindow{TriggerSource::kDelay, "delay"});
    }
    if (close_pending && now >= close_at) {
      close_pending = false;
      (void)Execute(CloseWindow{TriggerSource::kDuration, "duration"});
    }
    // However the window closed (duration, cudaProfilerStop), the choice waits kSettle.
    if (top_down_due()) choose_at = now + kSettle;
    sampling_.Reconcile(SamplingConditions(), prepare_ahead(now));
    if (stop_watching_due_.exchange(false) && stop_watching_) stop_watching_();
    if (duty_ != nullptr && (duty_wake_.exchange(false) || now >= duty_at)) {
      duty_at = duty_->Step(now);
    }
    if (choose_at && now >= *choose_at) {
      choose_at.reset();
      top_down_queued_ = true;
      QueueHotKernelChoice();
    }
    if (hand_over_due_.exchange(false)) (void)cupti_.FlushAll(/*forced=*/true);
    if (now >= next_flush) {
      // Default flush: every buffer whose records are all complete, full or not. A forced flush
      // here would hand over kernels still running, with their timestamps unset.
      (void)cupti_.FlushAll(false);
      next_flush = now + period;
    }
    lock.lock();
  }
}

}  // namespace cuscope::cupti
