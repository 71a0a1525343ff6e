#include "lib/cupti/activity_collector.h"
#include "lib/cupti/collector_session.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <cupti.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/process/call_stack.h"
#include "lib/process/launch_place.h"
#include "lib/core/metric_sets.h"
#include "lib/core/output_name.h"
#include "lib/process/python_stack.h"
#include "lib/core/terminal_text.h"
#include "lib/core/trace_writer.h"
#include "lib/cupti/call_timer.h"
#include "lib/cupti/request_scopes.h"
#include "lib/cupti/capture_controller.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/kernel_metrics_collector.h"
#include "lib/cupti/launch_stacks.h"
#include "lib/cupti/nvtx_capture.h"
#include "lib/cupti/sampling_controller.h"
#include "lib/cupti/trace_header.h"
#include "lib/cupti/trace_pipeline.h"
#include "lib/cupti/trigger_commands.h"
#include "lib/cupti/undo_stack.h"
#include "lib/control/control_server.h"
#include "lib/control/socket_directory.h"
#include "lib/core/version.h"
#include "lib/cupti/collector_control.h"
#include "lib/monitor/prometheus_exporter.h"
#include "lib/monitor/process_status.h"

namespace cuscope::cupti {
namespace {

using SteadyClock = std::chrono::steady_clock;


std::vector<std::unique_ptr<Session>>& RetainedSessions() {
  static auto* sessions = new std::vector<std::unique_ptr<Session>>();
  return *sessions;
}

std::mutex g_lifecycle_mu;               // Start/Stop; never taken on a CUPTI callback path
std::atomic<Session*> g_session{nullptr};  // the active session, or nullptr
// The control socket's server. Its own lock, not g_lifecycle_mu: its thread answers requests
// under g_lifecycle_mu, so StopCollector stops it before taking that lock.
std::mutex g_control_mu;
std::unique_ptr<control::ControlServer> g_control;  // g_control_mu

}  // namespace

// The session CUPTI's callbacks may use: none in a forked child.
Session* CallbackSession() {
  Session* s = g_session.load(std::memory_order_acquire);
  if (s == nullptr || s->state.load(std::memory_order_relaxed) == Session::State::kForkedChild) return nullptr;
  return s;
}

bool DetachesBetweenWindows(const settings::Config& config, std::string* kept_by) {
  if (!config.duty_detach || !config.samples_by_duty_cycle()) return false;
  // What CUPTI must keep through a detach, or calls CUPTI from the program's threads at any time.
  const char* kept = nullptr;
  if (config.gpu_metrics) {
    kept = "GPU counter sampling (--gpu-metrics-devices)";
  } else if (!config.metrics.empty() || config.top_down_kernels > 0) {
    kept = "kernel metrics (--metrics, --top-down)";
  } else if (config.capture_range != "none") {
    kept = "a capture range (--capture-range)";
  } else if (config.stacks.on()) {
    kept = "launch stacks (--stacks)";
  }
  if (kept != nullptr && kept_by != nullptr) *kept_by = kept;
  return kept == nullptr;
}

namespace {

// The endpoint is an extra: a port in use or a bad address is one line, and the figures go on
// (to the file, and to an endpoint started next time).
void StartPrometheus(Session& s) {
  auto exporter = monitor::PrometheusExporter::Start(s.config.prometheus, monitor::kDefaultKernelLabels,
                                                     monitor::LaunchLabels(process::CurrentLaunchPlace()));
  if (!exporter.ok()) {
    s.Warn(absl::StrCat("no Prometheus endpoint: ", exporter.status().message(), "; monitoring goes on"));
    return;
  }
  s.exporter = *std::move(exporter);
}

// The control socket is an extra like the endpoint: without it, one line, and profiling goes on.
void StartControl(Session& s) {
  auto directory = control::ControlDirectory(/*create=*/true);
  absl::StatusOr<std::unique_ptr<control::ControlServer>> server =
      directory.ok() ? control::ControlServer::Start(*directory, ::getpid(), AnswerControlRequest)
                     : absl::StatusOr<std::unique_ptr<control::ControlServer>>(directory.status());
  if (!server.ok()) {
    s.Warn(absl::StrCat("no control socket (cuscope capture and status cannot reach this process): ",
                        server.status().message(), "; profiling goes on"));
    return;
  }
  std::lock_guard<std::mutex> lock(g_control_mu);
  g_control = *std::move(server);
}

void StopControl() {
  std::unique_ptr<control::ControlServer> server;
  {
    std::lock_guard<std::mutex> lock(g_control_mu);
    server = std::move(g_control);
  }
  server.reset();  // joins its thread, which may be waiting for g_lifecycle_mu: not held here
}

// Flight mode's own triggers: a snapshot named by the output, holding flight_after_seconds after
// the trigger. Refused while another snapshot is written: the trigger's moment is in that one's
// seconds, or close.
Snapshot TriggeredSnapshot(const Session& s, TriggerSource source, std::string why) {
  return Snapshot{.source = source,
                  .path = "",
                  .after_seconds = s.config.flight_after_ms / 1000.0,
                  .force_overwrite = s.config.force_overwrite,
                  .why = std::move(why)};
}

// The writer thread's detectors (a slow NVTX step range, an idle GPU) post their snapshot: the
// writer takes no lock of the collector's and waits for no other thread.
void OnSlowStepRange(Session& s, uint64_t length_ns) {
  s.capture->Post(TriggeredSnapshot(
      s, TriggerSource::kStepRange,
      absl::StrFormat("NVTX range \"%s\" took %.3f s (threshold %.3f s)", s.config.flight_step_range, length_ns / 1e9,
                      s.config.flight_step_threshold_ms / 1000.0)));
}

void OnGpuIdle(Session& s, const monitor::IdleEvent& idle) {
  s.capture->Post(TriggeredSnapshot(
      s, TriggerSource::kIdleGpu,
      absl::StrFormat("GPU %d idle %.1f%% of the last %.1f s (threshold %.0f%%)", idle.device, 100 * idle.idle_share,
                      idle.window_ns / 1e9, 100 * s.config.flight_idle_share)));
}

// Flight mode's request trigger, on the program's thread at the slow request's end (not inside
// CUPTI): the snapshot is submitted and started when the request's end returns, as a slow
// MarkStep's. The lifecycle lock, as MarkStep takes it: only slow requests pay for it.
void OnSlowRequest(Session& s, const core::RequestScopeActivity& slow) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  if (g_session.load() != &s) return;
  std::string why = absl::StrFormat("request %d", slow.id);
  if (!slow.route.empty()) absl::StrAppend(&why, " (route ", std::string(slow.route), ")");
  absl::StrAppendFormat(&why, " took %.3f s (threshold %.3f s)", (slow.end - slow.start) / 1e9,
                        s.config.flight_request_threshold_ms / 1000.0);
  (void)s.capture->Submit(TriggeredSnapshot(s, TriggerSource::kSlowRequest, std::move(why)));
}

// The rooms, wired to each other. Nothing runs yet.
void BuildRooms(Session& s, std::unique_ptr<core::TraceWriter> writer, v1::Header header) {
  const auto warn = [&s](const std::string& msg) { s.Warn(msg); };
  TracePipeline::Hooks hooks;
  hooks.write_failed = [&s] { (void)s.capture->RunNow(StopRecording{}); };
  hooks.hot_kernels_chosen = [&s](std::vector<core::HotKernelChoice> chosen, uint64_t launches_each) {
    s.capture->HotKernelsChosen(std::move(chosen), launches_each, s.metrics_request, s.metrics.get());
  };
  if (s.config.mode == settings::CollectionMode::kMonitor) {
    hooks.kernel_metrics_phase = [&s](bool begin) { return KernelMetricsPhase(s, begin); };
  }
  hooks.counter_totals = [&s] { return s.sampling->totals(); };
  hooks.attachment_figures = [&s](v1::CaptureStats* st) {
    if (s.attachment == nullptr) return;
    const CuptiAttachment::Figures f = s.attachment->figures();
    st->set_cupti_detaches(f.detaches);
    st->set_cupti_detaches_given_up(f.given_up);
    st->set_cupti_attaches(f.attaches);
    st->set_buffers_not_walked(s.pipeline->buffers_not_walked());
  };
  hooks.slow_step_range = [&s](uint64_t length_ns) { OnSlowStepRange(s, length_ns); };
  hooks.gpu_idle = [&s](const monitor::IdleEvent& idle) { OnGpuIdle(s, idle); };
  hooks.every_record_wanted = [&s] {
    if (s.capture != nullptr) s.capture->WakeForEveryRecord();
  };
  hooks.intervals_closed = [&s](const std::vector<monitor::IntervalFigures>& closed) {
    const monitor::DutyCycle* duty = s.capture != nullptr ? s.capture->duty_cycle() : nullptr;
    const monitor::DutyCycle::Status duty_now = duty != nullptr ? duty->status() : monitor::DutyCycle::Status{};
    const double budget = duty_now.governed ? s.config.overhead_budget : 0;
    {
      std::lock_guard<std::mutex> lock(s.totals_mu);
      for (const auto& f : closed) s.totals.Add(f);
      if (duty != nullptr) s.totals.SetDutyCycle(duty_now.duty, duty_now.estimated_cost, budget);
    }
    if (s.exporter == nullptr) return;
    for (const auto& f : closed) s.exporter->Publish(f);
    if (duty != nullptr) s.exporter->PublishDutyCycle(duty_now.duty, duty_now.estimated_cost, budget);
  };
  s.pipeline = std::make_unique<TracePipeline>(s.config, s.cupti, std::move(writer), std::move(header), warn,
                                               std::move(hooks));
  s.sampling = std::make_unique<SamplingController>(s.config, s.cupti, *s.pipeline, warn, StopSamplingAtExit);
  ActivitySelection selection = ActivitySelection::FromConfig(s.config, s.cupti);
  if (ActivitySelection::TimesLeanCalls(s.config)) {
    s.timer = std::make_unique<CallTimer>(
        s.cupti,
        [&s](const core::ApiActivity* call, const core::SyncRecord* sync) { s.pipeline->QueueTimedCall(call, sync); },
        /*sync_records=*/!s.config.kind_enabled("sync"));
    selection.SetTimedCallSwitch([&s](bool on) { SwitchTimedCalls(s, on); });
  }
  s.capture = std::make_unique<CaptureController>(s.config, s.cupti, std::move(selection), *s.pipeline, *s.sampling,
                                                  warn);
  s.requests = std::make_unique<RequestScopes>(
      s.cupti, [&s](const core::RequestScopeActivity& scope) { s.pipeline->QueueRequestScope(scope); },
      [&s] { return s.capture->recording(); },
      s.config.mode == settings::CollectionMode::kFlight ? uint64_t{s.config.flight_request_threshold_ms} * 1'000'000ull : 0,
      [&s](const core::RequestScopeActivity& slow) { OnSlowRequest(s, slow); });
  // Monitor mode: a capture's top-down chooses among its window's kernels.
  if (s.config.top_down_kernels > 0 || s.config.mode == settings::CollectionMode::kMonitor) {
    s.pipeline->EnableKernelTotals();
  }
}

// What a session set up once after subscribing, which CUPTI forgets at a detach: set up again at
// each attach, on the control thread.
absl::Status SetUpAfterAttach(Session& s) {
  s.cupti.UseSystemThreadIds();
  if (s.queue_times) {
    if (auto st = s.cupti.EnableLatencyTimestamps(true); !st.ok()) return st;
  }
  s.cupti.SetFlushPeriod(s.config.flush_period_ms);
  WatchGraphInstantiations(s);
  return absl::OkStatus();
}

// The writer's walk of the last buffers before a detach: a buffer takes milliseconds.
constexpr std::chrono::milliseconds kWalkWait{200};

// The duty cycle's switch detaches CUPTI after each window and attaches it before the next.
void AttachBetweenWindows(Session& s) {
  CuptiAttachment::Hooks hooks;
  hooks.callback = OnApiCallback;
  hooks.userdata = &s;
  hooks.buffer_requested = OnBufferRequested;
  hooks.buffer_completed = OnBufferCompleted;
  hooks.set_up = [&s](CUpti_SubscriberHandle) { return SetUpAfterAttach(s); };
  hooks.drain = [&s] { return s.pipeline->WaitBuffersWalked(kWalkWait); };
  s.attachment = std::make_unique<CuptiAttachment>(s.raw_cupti, &s.subscriber, std::move(hooks), s.gate.get());
  s.pipeline->WalkBuffersThrough(s.gate.get());
  s.capture->DetachBetweenWindows(s.attachment.get());
}

}  // namespace

absl::Status StartCollector(const settings::Config& config, const std::string& entry) {
  return StartCollector(config, entry, RealCuptiApi());
}

absl::Status StartCollector(const settings::Config& config, const std::string& entry, CuptiApi& cupti) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  if (g_session.load() != nullptr) return absl::FailedPreconditionError("a cuscope session is already active");
  if (!cupti.DriverLoadable()) {
    return absl::UnavailableError("no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded)");
  }
  // Monitor mode may run without a file (an empty output); flight mode writes only snapshots.
  absl::StatusOr<std::string> path = std::string();
  if (!config.output.empty() && config.mode != settings::CollectionMode::kFlight) {
    path = core::ExpandOutputName(config.output, core::CurrentProcessOutputContext());
  }
  if (!path.ok()) return path.status();
  std::string kept_attached_by;
  const bool detaches = DetachesBetweenWindows(config, &kept_attached_by);
  Session& s = *RetainedSessions().emplace_back(std::make_unique<Session>(config, entry, cupti, detaches));
  if (config.duty_detach && !detaches && !kept_attached_by.empty()) {
    s.Warn(absl::StrCat("CUPTI stays attached between the duty cycle's windows: ", kept_attached_by,
                        " needs it throughout"));
  }

  // Each step that succeeds pushes its undo; a failure returns and the stack undoes, newest first.
  UndoStack undo;
  // Subscribing first tells us whether another CUPTI tool owns this process.
  if (auto st = cupti.Subscribe(OnApiCallback, &s, &s.subscriber); !st.ok()) return st;
  undo.Push([&s] { s.cupti.Unsubscribe(s.subscriber); });
  std::unique_ptr<core::TraceWriter> writer;
  if (!path->empty()) {
    auto created = core::TraceWriter::Create(*path, config.force_overwrite);
    if (!created.ok()) return created.status();
    writer = *std::move(created);
    undo.Push([&path] { ::unlink(path->c_str()); });
  }
  cupti.UseSystemThreadIds();
  if (config.queue_times) {
    // Before any kind is enabled: CUPTI reads the setting as it sets up a kind's records. Without
    // them the trace is whole, only its kernels carry no queue time: one line, and on.
    if (auto st = cupti.EnableLatencyTimestamps(true); st.ok()) {
      s.queue_times = true;
      undo.Push([&cupti] { (void)cupti.EnableLatencyTimestamps(false); });
    } else {
      s.Warn(absl::StrCat("kernels carry no queue times (", st.message(), "); the trace goes on without them"));
    }
  }
  if (auto st = cupti.RegisterBufferCallbacks(OnBufferRequested, OnBufferCompleted); !st.ok()) return st;
  cupti.SetFlushPeriod(config.flush_period_ms);
  BuildRooms(s, std::move(writer), BuildTraceHeader(config, entry, cupti, cupti.Timestamp()));
  // Before the session is published: CUPTI's callbacks read the attachment.
  if (detaches) AttachBetweenWindows(s);
  undo.Push([&s] { (void)s.pipeline->Close(); });
  g_session.store(&s, std::memory_order_release);
  undo.Push([] { g_session.store(nullptr); });

  if (config.capture_range == "cudaProfilerApi") {
    if (auto st = EnableProfilerApiCallbacks(s); !st.ok()) return st;
  } else if (config.capture_range == "nvtx") {
    if (auto st = EnableNvtxCaptureCallbacks(s); !st.ok()) return st;
  } else if (config.delay_seconds == 0) {
    if (auto st = s.capture->RunNow(OpenWindow{TriggerSource::kSession, "session"}); !st.ok()) return st;
  }
  if (s.capture->HoldsKinds()) {
    if (auto st = s.capture->HoldKinds(); !st.ok()) return st;
  }
  undo.Push([&s] { (void)s.capture->RunNow(EndSession{}); });
  if (!config.metrics.empty()) {
    StartKernelMetrics(s);
    undo.Push([&s] { s.metrics->Shutdown(); });
  } else if (config.mode == settings::CollectionMode::kMonitor) {
    PrepareKernelMetricsOnDemand(s);
    undo.Push([&s] {
      if (s.metrics != nullptr) s.metrics->Shutdown();
    });
  }
  if (config.stacks.on()) StartLaunchStacks(s);
  if (config.samples_by_duty_cycle()) WatchGraphInstantiations(s);
  if (config.gpu_metrics) WatchForContext(s);
  if (!config.prometheus.empty()) StartPrometheus(s);
  // A process at its thread limit: an error like any other, never an exception.
  if (auto st = s.pipeline->StartWriting(); !st.ok()) return st;
  undo.Push([&s] { s.pipeline->FinishWriting(); });
  if (auto st = s.capture->StartControlThread(); !st.ok()) return st;
  undo.Dismiss();
  if (config.control) StartControl(s);
  return absl::OkStatus();
}

absl::Status StopCollector(CollectorSummary* summary) {
  // A forked child must not touch the parent's session, nor a lock the parent may have held.
  if (Session* early = g_session.load(); early != nullptr && early->state.load() == Session::State::kForkedChild) {
    return absl::OkStatus();
  }
  StopControl();
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  // The order matters: nothing may open a window or start the counters once the stop began, the
  // counters are free before the window's end is queued, every buffer CUPTI holds (partly filled
  // ones too) reaches the writer before it writes its last chunk, and CUPTI lets go of our
  // callbacks only after that.
  s->capture->StopControlThread();
  // Detached between windows (no detach is under way once the control thread stopped): CUPTI
  // holds nothing of the session's, which the detach flushed; nothing to flush or unsubscribe.
  const bool cupti_attached = s->attachment == nullptr || s->attachment->End();
  s->capture->ChooseHotKernelsAtStop();
  s->sampling->ShutDown();
  (void)s->capture->RunNow(EndSession{});
  if (s->metrics != nullptr) s->metrics->Shutdown();
  const absl::Status flushed = cupti_attached ? s->cupti.FlushAll(/*forced=*/true) : absl::OkStatus();
  s->pipeline->FinishWriting();
  g_session.store(nullptr, std::memory_order_release);
  s->state.store(Session::State::kStopped);
  if (cupti_attached && s->subscriber != nullptr) {
    s->cupti.Unsubscribe(s->subscriber);
  }
  s->subscriber = nullptr;
  // Process-wide in CUPTI: a later session that does not ask for them must not pay for them.
  if (cupti_attached && s->queue_times) (void)s->cupti.EnableLatencyTimestamps(false);
  absl::Status closed = s->pipeline->Close();
  s->pipeline->ReleaseMemory();
  s->exporter.reset();  // its last figures were published by FinishWriting
  if (summary != nullptr) {
    summary->path = s->pipeline->path();
    summary->records = s->pipeline->records_written();
    summary->kernels = s->pipeline->kernels_written();
    summary->bytes = s->pipeline->bytes_written();
    summary->dropped = s->pipeline->dropped_by_cupti();
    summary->buffers_refused = s->pipeline->buffers_refused();
    summary->launches_profiled = s->metrics != nullptr ? s->metrics->profiled() : 0;
    summary->launch_stacks_dropped = s->pipeline->launch_stacks_dropped();
  }
  if (!flushed.ok()) return flushed;
  if (s->pipeline->failed()) return absl::DataLossError("the trace could not be written completely");
  return closed;
}

absl::Status FlushCollector() {
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  return s->cupti.FlushAll(/*forced=*/false);
}

absl::Status CheckCollectorReceivesRecords(double seconds, uint64_t min_calls) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  Session* s = CallbackSession();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  if (s->timer == nullptr) return absl::OkStatus();
  (void)s->cupti.FlushAll(/*forced=*/true);
  // The writer translates what the flush handed over: a moment for it.
  for (int i = 0; i < 100 && s->pipeline->kernel_records_seen() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const uint64_t calls = s->pipeline->timed_calls_queued();
  if (calls >= min_calls && s->pipeline->kernel_records_seen() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CUPTI's activity records go to another tool in this process (a running torch.profiler or another CUPTI "
        "client): ", calls, " CUDA calls seen, no kernel record received"));
  }
  return absl::OkStatus();
}

bool CollectorActive() { return CallbackSession() != nullptr; }

std::string CollectorOutputPath() {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  return s != nullptr && s->pipeline != nullptr ? s->pipeline->path() : std::string();
}

absl::Status OpenCollectorTraceWindow(double seconds) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  return s->capture->Submit(OpenTraceWindow{seconds});
}

absl::Status SnapshotCollector(const std::string& path, double after_seconds) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  return s->capture->Submit(Snapshot{.source = TriggerSource::kApi,
                                     .path = path,
                                     .after_seconds = after_seconds,
                                     .force_overwrite = s->config.force_overwrite,
                                     .why = ""});
}

absl::Status CaptureCollector(const CaptureSpec& spec) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  const std::string why = "asked through the control socket";
  if (spec.snapshot) {
    return s->capture->Submit(Snapshot{.source = TriggerSource::kControlSocket,
                                       .path = spec.path,
                                       .after_seconds = spec.seconds,
                                       .force_overwrite = spec.force_overwrite,
                                       .why = why});
  }
  return s->capture->Submit(Capture{.source = TriggerSource::kControlSocket,
                                    .path = spec.path,
                                    .seconds = spec.seconds,
                                    .force_overwrite = spec.force_overwrite,
                                    .top_down = {.kernels = spec.top_down_kernels,
                                                 .launches_each = spec.top_down_launches,
                                                 .wait_seconds = spec.top_down_wait_seconds},
                                    .why = why});
}

absl::StatusOr<v1::ProcessStatus> CollectorStatus() {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  v1::ProcessStatus status;
  status.set_pid(static_cast<uint32_t>(::getpid()));
  status.set_command_line(ProcessCommandLine());
  const process::LaunchPlace place = process::CurrentLaunchPlace();
  status.set_rank(place.rank);
  status.set_world_size(place.world_size);
  status.set_local_rank(place.local_rank);
  status.set_job_id(place.job_id);
  status.set_cuscope_version(core::kVersion);
  status.set_mode(ModeName(s->config.mode));
  status.set_entry(s->entry);
  status.set_seconds_running(std::chrono::duration<double>(SteadyClock::now() - s->started).count());
  status.set_output_path(s->pipeline->path());
  status.set_prometheus_port(s->exporter != nullptr ? static_cast<uint32_t>(s->exporter->port()) : 0);
  status.set_flight_chunks(s->pipeline->ring_chunks());
  status.set_flight_bytes(s->pipeline->ring_bytes());
  status.set_flight_seconds_held(s->pipeline->ring_held_ns() / 1e9);
  status.set_capture_busy(s->pipeline->capture_busy());
  status.set_duty_cycle(1);
  if (const monitor::DutyCycle* duty = s->capture->duty_cycle(); duty != nullptr) {
    const monitor::DutyCycle::Status d = duty->status();
    status.set_duty_cycle(d.duty);
    status.set_estimated_overhead(d.estimated_cost);
    status.set_records_per_second(d.records_per_second);
    status.set_duty_governed(d.governed);
    status.set_every_record(d.every_record);
    status.set_records_handed_over(d.hand_overs);
    status.set_kernel_records_missing(d.records_missing);
    status.set_overhead_budget(d.governed ? s->config.overhead_budget : 0);
  }
  if (s->attachment != nullptr) {
    const CuptiAttachment::Figures f = s->attachment->figures();
    status.set_cupti_attachment(AttachmentStateName(s->attachment->state()));
    status.set_cupti_detaches(f.detaches);
    status.set_cupti_detaches_given_up(f.given_up);
    status.set_cupti_attaches(f.attaches);
  }
  std::lock_guard<std::mutex> lock(s->totals_mu);
  monitor::FillProcessStatus(s->totals, &status);
  return status;
}

absl::StatusOr<bool> MarkCollectorStep(double seconds) {
  if (!(seconds >= 0)) return absl::InvalidArgumentError("a step's seconds must be 0 or more");
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  const uint32_t threshold_ms = s->config.flight_step_threshold_ms;
  if (!s->pipeline->flight_recording() || threshold_ms == 0 || seconds * 1000 <= threshold_ms) return false;
  const std::string why = absl::StrFormat("a step took %.3f s (threshold %.3f s)", seconds, threshold_ms / 1000.0);
  absl::Status st = s->capture->Submit(TriggeredSnapshot(*s, TriggerSource::kStepThreshold, why));
  // One snapshot at a time: slow steps while one is written add nothing to it.
  if (absl::IsFailedPrecondition(st)) return false;
  if (!st.ok()) return st;
  return true;
}

absl::Status CloseCollectorTraceWindow() {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  return s->capture->Submit(CloseTraceWindow{});
}

void BeginCollectorScope(uint64_t id, const char* route, const uint64_t* batch_requests, size_t batch_count,
                         bool batch) {
  Session* s = CallbackSession();
  if (s == nullptr || s->state.load(std::memory_order_relaxed) != Session::State::kActive) return;
  s->requests->Begin(id, route, batch_requests, batch_count, batch);
}

void EndCollectorScope(bool batch) {
  Session* s = CallbackSession();
  if (s == nullptr || s->state.load(std::memory_order_relaxed) != Session::State::kActive) return;
  s->requests->End(batch);
}

int CollectorPrometheusPort() {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  return s != nullptr && s->exporter != nullptr ? s->exporter->port() : 0;
}

void MarkCollectorForkedChild() {
  if (Session* s = g_session.load(); s != nullptr) s->state.store(Session::State::kForkedChild);
}

}  // namespace cuscope::cupti
