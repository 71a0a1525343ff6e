// The collector's callbacks: CUPTI's (buffers requested and completed, the API and resource
// callbacks of the session's one subscriber), and the callbacks each room turns on and off on that
// subscriber (the profiler gates, NVTX capture, kernel metrics, launch stacks, lean calls' timer,
// the first program call's watch, graph instantiations, context creation).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <cupti.h>

#include "absl/strings/str_cat.h"
#include "lib/core/metric_sets.h"
#include "lib/cupti/activity_selection.h"
#include "lib/cupti/collector_session.h"
#include "lib/cupti/nvtx_capture.h"

namespace cuscope::cupti {
namespace {

using SteadyClock = std::chrono::steady_clock;

uint64_t NanosecondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count();
}

}  // namespace

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

namespace {

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
}  // namespace


// cudaProfilerStart/Stop (and the driver's cuProfilerStart/Stop) as capture gates; context
// creation and the program's first driver calls for the GPU counters; kernel launches and context
// teardown for kernel metrics.
void CUPTIAPI OnApiCallback(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Session* s = CallbackSession();
  if (s == nullptr) return;
  if (s->attachment != nullptr && !s->attachment->MayCallCupti()) {
    // A detach is armed (the runtime's calls reach this callback for it) or under way: a runtime
    // call's exit may carry it, and nothing else is done here (cupti_attachment.h).
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && data != nullptr &&
        static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_EXIT) {
      (void)s->attachment->AtCallExit(domain);
    }
    return;
  }
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

namespace {

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
}  // namespace


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

namespace {

// The top-down's metric sets, as CUSCOPE_TOP_DOWN collects them.
constexpr char kTopDownMetrics[] = "sol,occupancy,stalls";
}  // namespace


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

namespace {

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
}  // namespace


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

}  // namespace cuscope::cupti
