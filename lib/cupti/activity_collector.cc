#include "lib/cupti/activity_collector.h"

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

// One collection session: the rooms and what ties them to CUPTI. Never freed (kept in
// RetainedSessions): CUPTI may call a buffer callback late, and a dangling session would crash the
// program.
struct Session {
  enum class State {
    kActive,
    kForkedChild,  // in a child after fork(): neither writes nor flushes the parent's trace
    kStopped,
  };

  Session(const settings::Config& c, std::string e, CuptiApi& api) : config(c), entry(std::move(e)), cupti(api) {}

  void Warn(const std::string& msg) const {
    // Messages quote paths and names the program or a peer chose: escaped and cut like the CLI's.
    if (!config.quiet) std::fprintf(stderr, "cuscope: %s\n", core::LineForTerminal(msg).c_str());
  }

  const settings::Config config;
  const std::string entry;
  CuptiApi& cupti;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::unique_ptr<TracePipeline> pipeline;
  std::unique_ptr<SamplingController> sampling;
  std::unique_ptr<CaptureController> capture;
  std::unique_ptr<KernelMetricsCollector> metrics;  // when kernel metrics are asked for, or may be
  // Whether the kernel metrics' launch callbacks are on: always with --metrics or --top-down; in
  // monitor mode only while a capture's top-down collects.
  std::atomic<bool> metrics_callbacks_on{false};
  std::string metrics_request;  // what the top-down's line names: "sol,occupancy,stalls"
  std::unique_ptr<monitor::PrometheusExporter> exporter;  // monitor mode with an endpoint
  std::unique_ptr<LaunchStackCollector> stacks;           // with CUSCOPE_STACKS
  std::unique_ptr<CallTimer> timer;  // lean collection's calls (ActivitySelection::TimesLeanCalls)
  std::unique_ptr<RequestScopes> requests;  // the program's request and batch scopes
  std::atomic<bool> timer_on{false};  // its callbacks enabled (with the kinds)
  std::atomic<bool> timer_refused_said{false};
  // Taken to turn callbacks off that several rooms share (the timer's, the first-call watch's,
  // the kernel metrics'), so that one room does not turn off what another just turned on.
  std::mutex callbacks_mu;
  bool queue_times = false;  // CUPTI's latency timestamps turned on by this session
  std::atomic<State> state{State::kActive};
  const SteadyClock::time_point started = SteadyClock::now();
  // Monitor mode: every closed interval, summed, for `cuscope status`.
  std::mutex totals_mu;
  monitor::RunningTotals totals;  // totals_mu
};

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

// The session CUPTI's callbacks may use: none in a forked child.
Session* CallbackSession() {
  Session* s = g_session.load(std::memory_order_acquire);
  if (s == nullptr || s->state.load(std::memory_order_relaxed) == Session::State::kForkedChild) return nullptr;
  return s;
}

uint64_t NanosecondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count();
}

// ---- CUPTI callbacks: short, lock only the queue, never call back into CUDA ----------------

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const auto t0 = SteadyClock::now();
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  Session* s = CallbackSession();
  if (s == nullptr) return;
  if (uint8_t* b = s->pipeline->AcquireBuffer(); b != nullptr) {
    *buffer = b;
    *size = s->pipeline->buffer_bytes();
  }
  s->pipeline->CountCallbackTime(NanosecondsSince(t0));
}

void CUPTIAPI OnBufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/, size_t valid) {
  const auto t0 = SteadyClock::now();
  Session* s = CallbackSession();
  if (s == nullptr) return;
  if (uint64_t dropped = s->cupti.DroppedRecords(ctx, stream_id); dropped > 0) s->pipeline->CountDropped(dropped);
  if (buffer != nullptr) s->pipeline->BufferCompleted(buffer, valid);
  s->pipeline->CountCallbackTime(NanosecondsSince(t0));
}

// cudaProfilerStart/Stop and their driver twins: the callbacks a cudaProfilerApi capture enables,
// and how OnApiCallback tells them apart.
struct ProfilerGate {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  bool start;  // false: a stop
};
constexpr ProfilerGate kProfilerGates[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, true},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, true},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, false}};

const ProfilerGate* FindProfilerGate(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  for (const ProfilerGate& g : kProfilerGates) {
    if (g.domain == domain && g.cbid == cbid) return &g;
  }
  return nullptr;
}

// cudaProfilerStart/Stop (and the driver's cuProfilerStart/Stop) as capture gates; context
// creation and the program's first driver calls for the GPU counters; kernel launches and context
// teardown for kernel metrics.
void CUPTIAPI OnApiCallback(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Session* s = CallbackSession();
  if (s == nullptr) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    s->capture->OnContextCreated();
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
      (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING || cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)) {
    s->capture->OnGraphInstantiation(cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    if (data != nullptr) s->capture->OnNvtxCall(cbid, *static_cast<const CUpti_NvtxData*>(data));
    return;
  }

  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && s->sampling->AwaitingProgramCall() &&
      static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER) {
    s->capture->OnProgramCall();
  }
  const ProfilerGate* gate = FindProfilerGate(domain, cbid);
  if (gate == nullptr) {
    const bool api_call = domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API;
    if (s->timer != nullptr && api_call) {
      s->timer->OnCallback(domain, cbid, *static_cast<const CUpti_CallbackData*>(data), s->capture->recording());
    }
    // The stack first: a launch the metrics profile is then replayed, which the stack need not see.
    if (s->stacks != nullptr && api_call) {
      s->stacks->OnCallback(domain, cbid, *static_cast<const CUpti_CallbackData*>(data), s->capture->recording());
    } else if (s->stacks != nullptr && domain == CUPTI_CB_DOMAIN_RESOURCE) {
      s->stacks->OnResource(cbid, *static_cast<const CUpti_ResourceData*>(data));
    }
    if (s->metrics != nullptr) s->metrics->OnCallback(domain, cbid, data, s->capture->recording());
    return;
  }
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (gate->start) {
    s->capture->OnProfilerStart(info->callbackSite == CUPTI_API_EXIT);
  } else {
    s->capture->OnProfilerStop(info->callbackSite == CUPTI_API_ENTER);
  }
}

// Stops the counters at exit before anything they use is torn down. The sampler decodes with
// objects of the profiler host libraries, some created at its first set-up; static destructors
// and exit handlers run newest first, so SamplingController registers this handler after that
// set-up (one registered earlier would find them freed: "double free or corruption", or
// "unordered_map::at" thrown at exit). The handler waits for a set-up in progress, then gives the
// counters back.
void StopSamplingAtExit() {
  if (Session* s = CallbackSession(); s != nullptr) s->sampling->ShutDown();
}

// ---- Starting -------------------------------------------------------------------------------

absl::Status EnableProfilerApiCallbacks(Session& s) {
  for (const ProfilerGate& g : kProfilerGates) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, g.domain, g.cbid); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status EnableNvtxCaptureCallbacks(Session& s) {
  for (CUpti_CallbackId cbid : NvtxCaptureCallbacks()) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, CUPTI_CB_DOMAIN_NVTX, cbid); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// The rooms that turn API callbacks on and off on the session's one subscriber.
enum class Room { kCallTimer, kFirstCallWatch, kKernelMetrics };

// Whether a room other than `asking` uses this callback now: the call timer while its callbacks
// are on, the launch stacks, the kernel metrics while theirs are on, the profiler gates, the watch
// for the program's first driver call. A room turns a callback off only when this says no.
bool OtherRoomsUseCallback(const Session& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, Room asking) {
  const auto in = [&](const std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>& callbacks) {
    return std::find(callbacks.begin(), callbacks.end(), std::make_pair(domain, cbid)) != callbacks.end();
  };
  if (asking != Room::kCallTimer && s.timer_on.load() && s.timer->Uses(domain, cbid)) return true;
  if (s.stacks != nullptr && in(LaunchStackCollector::Callbacks())) return true;
  if (asking != Room::kKernelMetrics && s.metrics != nullptr && s.metrics_callbacks_on.load() &&
      in(KernelMetricsCollector::Callbacks())) {
    return true;
  }
  if (s.config.capture_range == "cudaProfilerApi" && FindProfilerGate(domain, cbid) != nullptr) return true;
  return asking != Room::kFirstCallWatch && domain == CUPTI_CB_DOMAIN_DRIVER_API && s.sampling->AwaitingProgramCall();
}

// Kernel metrics: the launch callbacks on the session's subscriber. A failure turns the metrics
// off with one line; the timeline does not depend on them.
void StartKernelMetrics(Session& s) {
  s.metrics = std::make_unique<KernelMetricsCollector>(
      s.cupti, s.config, [&s](ProfiledLaunch p) { s.pipeline->QueueProfiledLaunch(std::move(p)); },
      [&s](const std::string& msg) { s.Warn(msg); });
  s.metrics_request = s.config.metrics_request;
  s.metrics_callbacks_on.store(true);
  for (const auto& [domain, cbid] : KernelMetricsCollector::Callbacks()) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, domain, cbid); !st.ok()) {
      s.Warn(absl::StrCat("kernel metrics are off: ", st.message(), "; the timeline goes on"));
      s.metrics->Shutdown();
      return;
    }
  }
}

// The top-down's metric sets, as CUSCOPE_TOP_DOWN collects them.
constexpr char kTopDownMetrics[] = "sol,occupancy,stalls";

// Monitor mode: kernel metrics ready for a capture's top-down (`cuscope capture --top-down`), their
// callbacks off until one asks, so an always-on session pays nothing for them per launch.
void PrepareKernelMetricsOnDemand(Session& s) {
  auto metrics = core::ExpandMetricList(kTopDownMetrics);
  if (!metrics.ok()) return;  // the capture's top-down is refused then
  settings::Config config = s.config;
  config.metrics = *std::move(metrics);
  config.metrics_request = kTopDownMetrics;
  config.top_down_kernels = 1;  // targets, never a selection
  s.metrics_request = kTopDownMetrics;
  s.metrics = std::make_unique<KernelMetricsCollector>(
      s.cupti, config,
      [&s](ProfiledLaunch p) {
        s.pipeline->QueueProfiledLaunch(std::move(p));
        s.capture->HandOverHeldRecordsSoon();
      },
      [&s](const std::string& msg) { s.Warn(msg); });
}

// A capture's top-down, on the snapshot thread (no lock of the collector's is held): the counters
// over time give the GPU's counters back and the launch callbacks go on; at the end the reverse,
// and the Range Profiler lets go of the contexts.
bool KernelMetricsPhase(Session& s, bool begin) {
  const auto callbacks = KernelMetricsCollector::Callbacks();
  const auto turn_off = [&s, &callbacks](size_t count) {
    for (size_t i = 0; i < count; ++i) {
      const auto [domain, cbid] = callbacks[i];
      // Still watched for the counters' first set-up, timed, or taken by the stacks: theirs to end.
      std::lock_guard<std::mutex> lock(s.callbacks_mu);
      if (OtherRoomsUseCallback(s, domain, cbid, Room::kKernelMetrics)) continue;
      s.cupti.DisableCallback(s.subscriber, domain, cbid);
    }
  };
  if (!begin) {
    if (!s.metrics->ClearTargets(std::chrono::seconds(10))) {
      s.Warn("a launch profiled for the capture's top-down did not end within 10 s; the GPU counters over time stay "
             "off");
      s.metrics_callbacks_on.store(false);
      return false;
    }
    s.metrics_callbacks_on.store(false);
    turn_off(callbacks.size());
    (void)s.capture->PauseCountersForKernelMetrics(false);
    s.capture->HandOverHeldRecordsSoon();  // a replay given up midway leaves its record open too
    return true;
  }
  if (s.metrics == nullptr) {
    s.Warn("the capture's top-down collects no kernel metrics: this session has none");
    return false;
  }
  if (!s.capture->PauseCountersForKernelMetrics(true)) return false;
  s.metrics_callbacks_on.store(true);
  for (size_t i = 0; i < callbacks.size(); ++i) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, callbacks[i].first, callbacks[i].second); !st.ok()) {
      s.Warn(absl::StrCat("the capture's top-down collects no kernel metrics: ", st.message()));
      s.metrics_callbacks_on.store(false);
      turn_off(i);
      (void)s.capture->PauseCountersForKernelMetrics(false);
      return false;
    }
  }
  return true;
}

// Call stacks of launches: their callbacks on the session's subscriber. A failure turns the
// stacks off with one line; the timeline does not depend on them.
void StartLaunchStacks(Session& s) {
  s.stacks = std::make_unique<LaunchStackCollector>(s.config.stacks, *s.pipeline, s.cupti);
  if (s.config.unwinder == process::Unwinder::kLibgcc) {
    process::UseLibgcc();
  } else if (auto st = process::UseLibunwind(); !st.ok()) {
    s.Warn(std::string(st.message()));
  }
  // In a Python program, its frames too; a CPython whose layout is unknown keeps native frames.
  if (auto python = process::PythonStackReader::ForThisProcess(); python.ok()) {
    s.stacks->ReadPythonFrames(*python);
  } else if (!absl::IsNotFound(python.status())) {
    s.Warn(absl::StrCat(python.status().message(), ": call stacks keep their native frames only"));
  }
  for (const auto& [domain, cbid] : LaunchStackCollector::Callbacks()) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, domain, cbid); !st.ok()) {
      s.Warn(absl::StrCat("call stacks are off: ", st.message(), "; the timeline goes on"));
      s.stacks->TurnOff();  // kept: another thread's callback may be using it
      return;
    }
  }
}

// Lean collection's calls, timed by callbacks turned on with the kinds and off with them
// (ActivitySelection::SetTimedCallSwitch). A callback CUPTI refuses: one line, the trace goes on
// with its kernels, copies and the rest, and the next window tries again.
void SwitchTimedCalls(Session& s, bool on) {
  std::lock_guard<std::mutex> lock(s.callbacks_mu);
  const auto& callbacks = s.timer->callbacks();
  const auto turn_off = [&s](size_t count) {
    for (size_t i = 0; i < count; ++i) {
      const auto [domain, cbid] = s.timer->callbacks()[i];
      if (OtherRoomsUseCallback(s, domain, cbid, Room::kCallTimer)) continue;
      s.cupti.DisableCallback(s.subscriber, domain, cbid);
    }
  };
  if (!on) {
    if (s.timer_on.exchange(false)) turn_off(callbacks.size());
    return;
  }
  for (size_t i = 0; i < callbacks.size(); ++i) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, callbacks[i].first, callbacks[i].second); !st.ok()) {
      turn_off(i);
      if (!s.timer_refused_said.exchange(true)) {
        s.Warn(absl::StrCat("no runtime or driver call is recorded: ", st.message(),
                            "; the trace goes on without them"));
      }
      return;
    }
  }
  s.timer_on.store(true);
}

// A session that starts with the program (no context yet) sets its counters up on the program's
// thread, at the first driver call of the lean selection (launches, copies, allocations, ...)
// once a context exists: SamplingController says why. Those callbacks go off again once it is done.
void WatchForFirstProgramCall(Session& s) {
  std::vector<uint32_t> ids = LeanCallIds(v1::API_DOMAIN_DRIVER, s.cupti);
  for (uint32_t cbid : ids) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid); !st.ok()) {
      s.sampling->TurnOff(st);
      return;
    }
  }
  s.sampling->PrepareFirstOnProgramThread();
  s.capture->SetStopWatchingProgramCalls([&s, ids = std::move(ids)] {
    std::lock_guard<std::mutex> lock(s.callbacks_mu);
    for (uint32_t cbid : ids) {
      if (!OtherRoomsUseCallback(s, CUPTI_CB_DOMAIN_DRIVER_API, cbid, Room::kFirstCallWatch)) {
        s.cupti.DisableCallback(s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
      }
    }
  });
}

// Under the duty cycle, a CUDA graph instantiated while recording is off would never be recorded
// (CaptureController::OnGraphInstantiation): its instantiations are watched. Refused, the
// session says so once and goes on (such graphs then go unrecorded).
void WatchGraphInstantiations(Session& s) {
  // The end first: a start without its end watched would hold recording on.
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING}) {
    if (auto st = s.cupti.EnableCallback(s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid); !st.ok()) {
      s.Warn(absl::StrCat("graph instantiations are not watched (", st.message(),
                          "): a CUDA graph made while the duty cycle is not recording is never recorded"));
      return;
    }
  }
}

// Counters are sampled once the program has a context: at its first context creation, or
// already, when linked in late. The callback goes on first, so a context made meanwhile is seen
// one way or the other.
void WatchForContext(Session& s) {
  if (auto st = s.cupti.EnableCallback(s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
      !st.ok()) {
    s.sampling->TurnOff(st);
  }
  if (s.cupti.DriverHasContext()) {
    s.capture->MarkContextSeen();
  } else {
    WatchForFirstProgramCall(s);
  }
}

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

absl::Status RequestSnapshotFor(Session* s, const std::string& path, double after_seconds, bool force_overwrite,
                                const std::string& why);

// Flight mode's own triggers (a slow NVTX step range, an idle GPU): a snapshot named by the
// output, holding flight_after_seconds, as a slow MarkStep starts. Called on the writer thread, so
// it takes no lock of the collector's. Refused while another snapshot is written: the trigger's
// moment is in that one's seconds, or close.
void SnapshotForTrigger(Session& s, const std::string& why) {
  (void)RequestSnapshotFor(&s, "", s.config.flight_after_ms / 1000.0, s.config.force_overwrite, why);
}

void OnSlowStepRange(Session& s, uint64_t length_ns) {
  SnapshotForTrigger(s, absl::StrFormat("NVTX range \"%s\" took %.3f s (threshold %.3f s)", s.config.flight_step_range,
                                        length_ns / 1e9, s.config.flight_step_threshold_ms / 1000.0));
}

void OnGpuIdle(Session& s, const monitor::IdleEvent& idle) {
  SnapshotForTrigger(s, absl::StrFormat("GPU %d idle %.1f%% of the last %.1f s (threshold %.0f%%)", idle.device,
                                        100 * idle.idle_share, idle.window_ns / 1e9, 100 * s.config.flight_idle_share));
}

// Flight mode's request trigger, on the program's thread at the slow request's end: a snapshot
// named by the output, holding flight_after_seconds after it, as a slow MarkStep starts. The
// lifecycle lock, as MarkStep takes it: only slow requests pay for it.
void OnSlowRequest(Session& s, const core::RequestScopeActivity& slow) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  if (g_session.load() != &s) return;
  std::string why = absl::StrFormat("request %d", slow.id);
  if (!slow.route.empty()) absl::StrAppend(&why, " (route ", std::string(slow.route), ")");
  absl::StrAppendFormat(&why, " took %.3f s (threshold %.3f s)", (slow.end - slow.start) / 1e9,
                        s.config.flight_request_threshold_ms / 1000.0);
  SnapshotForTrigger(s, why);
}

// The rooms, wired to each other. Nothing runs yet.
void BuildRooms(Session& s, std::unique_ptr<core::TraceWriter> writer, v1::Header header) {
  const auto warn = [&s](const std::string& msg) { s.Warn(msg); };
  TracePipeline::Hooks hooks;
  hooks.write_failed = [&s] { s.capture->StopRecording(); };
  hooks.hot_kernels_chosen = [&s](std::vector<core::HotKernelChoice> chosen, uint64_t launches_each) {
    s.capture->HotKernelsChosen(std::move(chosen), launches_each, s.metrics_request, s.metrics.get());
  };
  if (s.config.mode == settings::CollectionMode::kMonitor) {
    hooks.kernel_metrics_phase = [&s](bool begin) { return KernelMetricsPhase(s, begin); };
  }
  hooks.counter_totals = [&s] { return s.sampling->totals(); };
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
  Session& s = *RetainedSessions().emplace_back(std::make_unique<Session>(config, entry, cupti));

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
  undo.Push([&s] { (void)s.pipeline->Close(); });
  g_session.store(&s, std::memory_order_release);
  undo.Push([] { g_session.store(nullptr); });

  if (config.capture_range == "cudaProfilerApi") {
    if (auto st = EnableProfilerApiCallbacks(s); !st.ok()) return st;
  } else if (config.capture_range == "nvtx") {
    if (auto st = EnableNvtxCaptureCallbacks(s); !st.ok()) return st;
  } else if (config.delay_seconds == 0) {
    if (auto st = s.capture->OpenSessionWindow(); !st.ok()) return st;
  }
  if (s.capture->HoldsKinds()) {
    if (auto st = s.capture->HoldKinds(); !st.ok()) return st;
  }
  undo.Push([&s] { s.capture->EndCapture(); });
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
  s->capture->ChooseHotKernelsAtStop();
  s->sampling->ShutDown();
  s->capture->EndCapture();
  if (s->metrics != nullptr) s->metrics->Shutdown();
  const absl::Status flushed = s->cupti.FlushAll(/*forced=*/true);
  s->pipeline->FinishWriting();
  g_session.store(nullptr, std::memory_order_release);
  s->state.store(Session::State::kStopped);
  if (s->subscriber != nullptr) {
    s->cupti.Unsubscribe(s->subscriber);
    s->subscriber = nullptr;
  }
  // Process-wide in CUPTI: a later session that does not ask for them must not pay for them.
  if (s->queue_times) (void)s->cupti.EnableLatencyTimestamps(false);
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
  return s->pipeline->OpenTraceWindow(seconds);
}

namespace {

// A snapshot of session `s` (null: none active); `why` ends the line that says it was written.
// Callers hold g_lifecycle_mu, or are the writer thread, which the session outlives: everything
// used here is fixed for the session's life.
absl::Status RequestSnapshotFor(Session* s, const std::string& path, double after_seconds, bool force_overwrite,
                                const std::string& why) {
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  if (!s->pipeline->flight_recording()) {
    return absl::FailedPreconditionError("a snapshot needs flight mode (CUSCOPE_MODE=flight)");
  }
  if (!(after_seconds >= 0) || after_seconds > 3600) {
    return absl::InvalidArgumentError("the seconds after a snapshot's request must be from 0 to 3600");
  }
  std::string target = path;
  if (target.empty()) {
    if (s->config.output.empty()) {
      return absl::InvalidArgumentError("no path for the snapshot: name one, or set the session's output");
    }
    // Each snapshot a file of its own: the lowest free number when the name has none.
    const std::string pattern =
        absl::StrContains(s->config.output, "%n") ? s->config.output : absl::StrCat(s->config.output, "_snapshot%n");
    auto expanded = core::ExpandOutputName(pattern, core::CurrentProcessOutputContext());
    if (!expanded.ok()) return expanded.status();
    target = *expanded;
  }
  return s->pipeline->RequestSnapshot(target, after_seconds, force_overwrite,
                                      [s, why](const absl::Status&, const std::string& line) {
                                        s->Warn(why.empty() ? line : absl::StrCat(line, "; ", why));
                                      });
}

}  // namespace

absl::Status SnapshotCollector(const std::string& path, double after_seconds) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  return RequestSnapshotFor(s, path, after_seconds, s != nullptr && s->config.force_overwrite, "");
}

absl::Status CaptureCollector(const CaptureSpec& spec) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  const std::string why = "asked through the control socket";
  if (spec.snapshot) return RequestSnapshotFor(s, spec.path, spec.seconds, spec.force_overwrite, why);
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  const CaptureTopDown top_down{.kernels = spec.top_down_kernels,
                                .launches_each = spec.top_down_launches,
                                .wait_seconds = spec.top_down_wait_seconds};
  return s->pipeline->RequestCapture(spec.path, spec.seconds, spec.force_overwrite, top_down,
                                     [s, why](const absl::Status&, const std::string& line) {
                                       s->Warn(absl::StrCat(line, "; ", why));
                                     });
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
  absl::Status st = RequestSnapshotFor(s, "", s->config.flight_after_ms / 1000.0, s->config.force_overwrite, why);
  // One snapshot at a time: slow steps while one is written add nothing to it.
  if (absl::IsFailedPrecondition(st)) return false;
  if (!st.ok()) return st;
  return true;
}

absl::Status CloseCollectorTraceWindow() {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  Session* s = g_session.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  return s->pipeline->CloseTraceWindow();
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
