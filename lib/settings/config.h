// Collector configuration, from CUSCOPE_* environment variables or from code.
//
// Parsing is strict: an unknown CUSCOPE_* variable or a bad value is an error that names it, and
// the caller keeps profiling off rather than guess.
#ifndef CUSCOPE_LIB_SETTINGS_CONFIG_H_
#define CUSCOPE_LIB_SETTINGS_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/process/call_stack.h"
#include "lib/core/kernel_selection.h"
#include "lib/settings/stack_sampling.h"

namespace cuscope::settings {

// Activity kinds by the names users give them. "all" enables every one. "api" is lean collection:
// only the runtime and driver calls the analyzer reads (api_names.h, CollectedWhenLean), chosen
// call by call; "runtime" and "driver" record every call of their API.
inline constexpr const char* kActivityKindNames[] = {"kernel", "memcpy", "memset", "api",     "runtime",
                                                    "driver", "sync",   "nvtx",   "memory", "overhead"};

// What a session keeps: every record (a trace), or per-interval figures (monitor, always on).
// kTrace: every record to the file. kMonitor: figures per interval. kFlight: the last seconds of
// records kept in memory, written only by a snapshot.
enum class CollectionMode { kTrace, kMonitor, kFlight };

struct Config {
  // Output file name pattern: %p process id, %h host name, %n sequence number (the lowest that
  // names no existing file), %q{VAR} an environment variable, %% a percent sign. ".cuscope" is
  // appended when the name has no extension of that name.
  std::string output = "cuscope_%p";
  bool force_overwrite = false;
  // Lean by default: "api" instead of every runtime and driver call. No "sync": lean collection
  // writes the synchronization records from the calls (lib/cupti/call_timer.h), where CUPTI's
  // SYNCHRONIZATION kind would intercept every call of the program.
  std::vector<std::string> activity_kinds = {"kernel", "memcpy", "memset", "api", "nvtx", "memory", "overhead"};
  CollectionMode mode = CollectionMode::kTrace;
  // CUPTI's latency timestamps (CUSCOPE_QUEUE_TIMES): each kernel record also says when the host
  // queued the launch into the command buffer, which places launches in time without recording
  // the launch calls. On the H100 they cost nothing measurable (PyTorch, kernel records +2.80 us a
  // kernel without them, +2.82 with; runs/overhead_matrix_h100_dec5_queue.txt) and every queue time
  // fell inside its launch call (20,201 of 20,201; 52,000 of 52,000). Off by default: with them on
  // for every session, a launch storm against a 64 KiB buffer cap (FaultGpuTest) ran past its
  // 120 s limit on the H100, where it passes without them; not yet understood.
  bool queue_times = false;
  // How "api" records its calls (CUSCOPE_LEAN_CALLS): callbacks on those calls alone (false, the
  // default; lib/cupti/call_timer.h) or CUPTI's API records with the other calls turned off (true),
  // which cost per call of the program. Either way the same calls and synchronization records.
  bool lean_calls_by_records = false;
  // Monitor mode: the length of one interval of figures, and how many kernels each device's
  // interval names (the rest are summed as "other").
  uint32_t monitor_interval_ms = 1000;
  uint32_t monitor_top_kernels = 10;
  // Monitor mode's duty cycle (lib/monitor/duty_governor.h): records are kept for short windows
  // spread over each interval, and the figures are estimated from them. `duty_cycle` (0..1,
  // CUSCOPE_DUTY_CYCLE) fixes the share of time recorded; otherwise the governor holds the session's
  // estimated added cost under `overhead_budget` (a share of the program's time,
  // CUSCOPE_OVERHEAD_BUDGET; 0 = "off": record all the time). Off by default: a session records all
  // the time unless asked for a budget or a duty cycle (its cost and its estimates' error are not
  // yet measured on a GPU).
  double duty_cycle = 0;
  double overhead_budget = 0;
  // How the recorded share is spread: this many windows in each interval (CUSCOPE_DUTY_WINDOWS).
  // Fewer switch recording on and off less often; more follow a program that changes within an
  // interval more closely.
  uint32_t duty_windows = 8;
  // Under a duty cycle, CUPTI detached from the process between windows (CUSCOPE_DUTY_DETACH) and
  // attached again for each: what CUPTI costs the program while attached stops between windows
  // too (docs/architecture.md, "Detaching between windows"). Off by default and not offered to
  // users yet: its first GPU run aborted a PyTorch program (heap corruption), not yet understood.
  // What needs CUPTI throughout keeps it attached: GPU counters, kernel metrics and the top-down,
  // a capture range, launch stacks.
  bool duty_detach = false;
  // Flight mode: how far back the kept records reach, and the memory they may take (the smaller
  // limit wins). `output` names the snapshots when the caller names none.
  uint32_t flight_span_ms = 30'000;
  uint64_t flight_size_bytes = 256ull << 20;
  // A step the program marks (Session::MarkStep) that took longer than this triggers a snapshot
  // (0 = never), holding `flight_after_ms` after the step too.
  uint32_t flight_step_threshold_ms = 0;
  uint32_t flight_after_ms = 0;
  // A request scope (include/cuscope/request.h) that took longer than this, begin to end, triggers
  // a snapshot as a slow step does (0 = never).
  uint32_t flight_request_threshold_ms = 0;
  // An NVTX range name whose ranges are steps too: one that lasted longer than the threshold
  // triggers a snapshot as a slow MarkStep does. Empty = none.
  std::string flight_step_range;
  // A device idle more than this share (0..1; 0 = never) of the last `flight_idle_window_ms`,
  // judged from per-interval figures kept in flight mode for it, triggers a snapshot.
  double flight_idle_share = 0;
  uint32_t flight_idle_window_ms = 10'000;
  // The Prometheus endpoint ("PORT", "ADDRESS:PORT"); empty = none. Monitor mode only.
  std::string prometheus;
  // Size of one CUPTI activity buffer. 4 MiB holds ~19,000 kernel records (~216 B each).
  uint64_t buffer_bytes = 4ull << 20;
  // Hard cap on buffer memory. 128 MiB (32 buffers) is ~0.8 s of the heaviest record stream seen
  // (~160 MB/s with every kind on, launch-bound), far more than a writer that drains a buffer in
  // a few ms needs; it matches what torch.profiler allows in total.
  uint64_t buffer_pool_cap_bytes = 128ull << 20;
  // CUPTI delivers partly filled buffers at this period, so the file is at most ~1 s behind.
  uint32_t flush_period_ms = 500;
  double delay_seconds = 0;
  double duration_seconds = 0;  // 0 = until the end
  // "none", "cudaProfilerApi" (collect only between cudaProfilerStart and cudaProfilerStop) or
  // "nvtx" (only during the first NVTX range named nvtx_capture).
  std::string capture_range = "none";
  std::string nvtx_capture;
  bool quiet = false;
  // A control socket (lib/control) through which `cuscope capture`, `status` and `ps` reach the
  // process; off with CUSCOPE_CONTROL=0.
  bool control = true;
  // Kernel internals: the Range Profiler metrics to collect (set names expanded; empty = none),
  // the list as the user gave it, and which launches to replay for them.
  std::vector<std::string> metrics;
  std::string metrics_request;
  core::KernelSelection kernel_selection;
  // How the Range Profiler gets its passes. Only "kernel" runs in-process: CUPTI saves the memory
  // a launch touches and replays it once per pass.
  std::string replay_mode = "kernel";
  // One-run top-down: after the timeline window (delay/duration or profiler start/stop) closes,
  // collect `metrics` on the next `top_down_launches` launches of each of the window's
  // `top_down_kernels` hottest kernels (name + grid + block). 0 = off.
  uint32_t top_down_kernels = 0;
  uint64_t top_down_launches = 3;
  // Call stacks of kernel launches (CUSCOPE_STACKS): none by default; trace mode only.
  StackSampling stacks;
  // The unwinder stacks are taken with (CUSCOPE_UNWINDER=libunwind|libgcc): libunwind, ~10x
  // cheaper a launch, when libunwind.so.8 loads (else libgcc's, with one line).
  process::Unwinder unwinder = process::Unwinder::kLibunwind;
  // GPU counters over time (PM sampling and NVML) during the timeline window: off, every device,
  // or the listed device ids. On by default with the top-down, where sampling stops when the
  // window closes, before the Range Profiler takes the counters. 1 kHz, not nsys's 10 kHz: on the
  // H200 decoding and evaluating one sample costs ~70 us of the sampler thread, so 10 kHz kept
  // 64-87% of a core busy.
  bool gpu_metrics = false;
  std::vector<uint32_t> gpu_metrics_devices;  // empty with gpu_metrics = every device
  uint32_t gpu_metrics_frequency_hz = 1000;
  // Every CUSCOPE_* variable as given, for the trace header.
  std::map<std::string, std::string> settings;

  // Monitor mode records in short windows (a duty cycle under 100%, or the governor's budget).
  bool samples_by_duty_cycle() const {
    return mode == CollectionMode::kMonitor && (duty_cycle > 0 ? duty_cycle < 1 : overhead_budget > 0);
  }
  bool kind_enabled(const std::string& kind) const;
};

// Parses CUSCOPE_* variables out of an environment (name, value pairs; others are ignored).
absl::StatusOr<Config> ParseConfigFromEnvironment(const std::vector<std::pair<std::string, std::string>>& env);

// Reads the process environment (environ).
std::vector<std::pair<std::string, std::string>> ProcessEnvironment();

// Parses a comma-separated list of activity kinds ("all" allowed).
absl::StatusOr<std::vector<std::string>> ParseActivityKinds(const std::string& list);

}  // namespace cuscope::settings

#endif  // CUSCOPE_LIB_SETTINGS_CONFIG_H_
