// The collector's one session, shared by the files of its room: activity_collector.cc (start, stop
// and the calls the program and the control socket make) and collector_callbacks.cc (CUPTI's
// callbacks, and the callbacks each room turns on and off on the session's subscriber). Internal
// to lib/cupti.
#ifndef CUSCOPE_LIB_CUPTI_COLLECTOR_SESSION_H_
#define CUSCOPE_LIB_CUPTI_COLLECTOR_SESSION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include <cupti.h>

#include "absl/status/status.h"
#include "lib/core/terminal_text.h"
#include "lib/cupti/call_timer.h"
#include "lib/cupti/capture_controller.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/cupti_attachment.h"
#include "lib/cupti/cupti_gate.h"
#include "lib/cupti/kernel_metrics_collector.h"
#include "lib/cupti/launch_stacks.h"
#include "lib/cupti/request_scopes.h"
#include "lib/cupti/sampling_controller.h"
#include "lib/cupti/trace_pipeline.h"
#include "lib/monitor/prometheus_exporter.h"
#include "lib/monitor/running_totals.h"
#include "lib/settings/config.h"

namespace cuscope::cupti {

// One collection session: the rooms and what ties them to CUPTI. Never freed (kept in
// RetainedSessions): CUPTI may call a buffer callback late, and a dangling session would crash the
// program.
struct Session {
  enum class State {
    kActive,
    kForkedChild,  // in a child after fork(): neither writes nor flushes the parent's trace
    kStopped,
  };

  // `detaches`: CUPTI may be detached between the duty cycle's windows (DetachesBetweenWindows):
  // then the session's calls pass a gate.
  Session(const settings::Config& c, std::string e, CuptiApi& api, bool detaches)
      : config(c),
        entry(std::move(e)),
        gate(detaches ? std::make_unique<CuptiGate>() : nullptr),
        gated(detaches ? std::make_unique<GatedCuptiApi>(api, *gate) : nullptr),
        cupti(detaches ? static_cast<CuptiApi&>(*gated) : api),
        raw_cupti(api) {}

  void Warn(const std::string& msg) const {
    // Messages quote paths and names the program or a peer chose: escaped and cut like the CLI's.
    if (!config.quiet) std::fprintf(stderr, "cuscope: %s\n", core::LineForTerminal(msg).c_str());
  }

  const settings::Config config;
  const std::string entry;
  const std::unique_ptr<CuptiGate> gate;
  const std::unique_ptr<GatedCuptiApi> gated;
  CuptiApi& cupti;      // what every room calls: through the gate when the session may detach
  CuptiApi& raw_cupti;  // underneath: the attachment's own moves
  // Detaches CUPTI between the duty cycle's windows and attaches it for each (cupti_attachment.h);
  // null when the session keeps CUPTI throughout.
  std::unique_ptr<CuptiAttachment> attachment;
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
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // Monitor mode: every closed interval, summed, for `cuscope status`.
  std::mutex totals_mu;
  monitor::RunningTotals totals;  // totals_mu
};

// Whether a session of `config` detaches CUPTI between its duty cycle's windows; when asked for but
// something the session needs keeps CUPTI attached, `kept_by` names it.
bool DetachesBetweenWindows(const settings::Config& config, std::string* kept_by);

// The session CUPTI's callbacks may use: none in a forked child (activity_collector.cc).
Session* CallbackSession();

// ---- collector_callbacks.cc -------------------------------------------------------------------

// CUPTI's callbacks: short, lock only the queue, never call back into CUDA.
void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI OnBufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid);
void CUPTIAPI OnApiCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
// The GPU counters given back at exit, before what they use is torn down.
void StopSamplingAtExit();

// Each room's callbacks on the session's subscriber.
absl::Status EnableProfilerApiCallbacks(Session& s);  // cudaProfilerStart/Stop as capture gates
absl::Status EnableNvtxCaptureCallbacks(Session& s);  // an NVTX range as the capture range
void StartKernelMetrics(Session& s);                  // --metrics, --top-down: the launch callbacks
void PrepareKernelMetricsOnDemand(Session& s);        // monitor mode: for a capture's top-down
bool KernelMetricsPhase(Session& s, bool begin);      // a capture's top-down begins or ends
void StartLaunchStacks(Session& s);                   // --stacks
void SwitchTimedCalls(Session& s, bool on);           // lean calls' timer, with the kinds
void WatchGraphInstantiations(Session& s);            // under a duty cycle
void WatchForContext(Session& s);                     // GPU counters, once there is a context

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_COLLECTOR_SESSION_H_
