// A bare CUPTI collector as an injection library: it enables activity kinds as cuscope does and
// discards every buffer unread. Injected beside a program (CUDA_INJECTION64_PATH), it measures
// what CUPTI itself costs, the floor under any CUPTI-based tool. What it enables comes from the
// environment, so that each cuscope configuration has its bare twin:
//
//   BARE_CUPTI_KINDS=kernel,memcpy,memset,runtime,driver,sync,nvtx,memory,overhead
//       the activity kinds, by cuscope's names for them (default: all of these)
//   BARE_CUPTI_API=lean|runtime-lean|driver-lean|lean-nolaunch
//       instead of the runtime and driver kinds (every call), only the calls cuscope's lean
//       collection records, enabled call by call: the callback ids whose names
//       cuscope::core::CollectedWhenLean keeps, the very selection cuscope makes (of both APIs,
//       of the runtime's only, of the driver's only); lean-nolaunch: both APIs' lean calls but
//       the kernel launches (graph launches kept), whose time the kernel records' queued
//       timestamp stands in for (BARE_CUPTI_LATENCY)
//   BARE_CUPTI_LATENCY=1
//       cuptiActivityEnableLatencyTimestamps(1): kernel records carry when the launch was
//       queued into the command buffer and when that buffer was submitted
//   BARE_CUPTI_SUBSCRIBE=1
//       also subscribe a no-op callback with no callback enabled: what a subscriber alone costs
//   BARE_CUPTI_CALLBACK=lean|runtime-lean|driver-lean|lean-nolaunch
//       the lean calls timed by a callback instead of CUPTI's API records: at entry and exit the
//       callback reads CUPTI's clock and, at exit, writes a 32-byte record (call, correlation id,
//       start, end) into a per-thread buffer; what an API record costs done by hand (both APIs,
//       the runtime's calls only, the driver's only; lean-nolaunch: both APIs' lean calls but the
//       kernel launches, so that no per-kernel call has a callback)
//   BARE_CUPTI_CHECK=1
//       not for timing: reads every buffer and prints at exit the records by kind and how many
//       kernel records share their correlation id with a timed runtime or driver call
//   BARE_CUPTI_COUNT_CALLS=1
//       not for timing, alone: counts every runtime and driver call the program makes (a callback
//       on both domains) and prints the most frequent at exit
//   BARE_CUPTI_GATE=profiler
//       nothing enabled until cudaProfilerStart (cuProfilerStart), everything off again at
//       cudaProfilerStop, as often as the program asks: the collection toggled inside one process,
//       so that its cost can be read against the same process's plain stretches
//   BARE_CUPTI_GATE=context
//       nothing enabled until CUPTI reports the first CUDA context made (the CONTEXT_CREATED
//       resource callback), then everything on for good: the collection turned on after the
//       context exists but before the program's first kernel, to tell "enabled before the context"
//       from "enabled after the warm-up" (BARE_CUPTI_GATE=profiler with a window after it)
//   BARE_CUPTI_TOGGLE=PERIOD_US,WINDOW_US
//       not for timing, with BARE_CUPTI_CHECK=1: nothing enabled at the start; a thread turns
//       everything on for WINDOW_US in the middle of every PERIOD_US, as a duty cycle does, and
//       prints at exit how long enabling and disabling took and, per window, where its kernel
//       records start against the moments the collection was switched (does a window record
//       what the program launched while it was open, from when, and until when)
//   BARE_CUPTI_ONCE=AT_MS,FOR_MS
//       the collection switched on once and off for good, its buffers discarded unread (a timing
//       run): AT_MS after the injection (0: at the injection, before the program has a context)
//       for FOR_MS. On from the start and off later, against on later into a running context
//       and off again: whether a collection switched on into a live context leaves a cost behind
//       once it is off
//   BARE_CUPTI_CYCLE=PERIOD_MS,WINDOW_MS
//       the collection on for WINDOW_MS in every PERIOD_MS, at a duty cycle's pace, its buffers
//       discarded unread (a timing run); nothing on at the start
//   BARE_CUPTI_DETACH=1|exit
//       with BARE_CUPTI_ONCE or BARE_CUPTI_CYCLE: once the collection is off, its buffers flushed,
//       the subscriber gone, CUPTI detached from the process (cuptiFinalize), and with
//       BARE_CUPTI_CYCLE attached again (callbacks registered, subscribed) before the next window:
//       whether what stays after the switch off leaves with CUPTI, and what detaching and
//       attaching at every window costs. 1: detached from a thread of the injection's own (a
//       probe, not a way to ship it); exit: as CUPTI recommends, at the exit of the program's next
//       runtime call (the runtime domain's callbacks on until then, at most 2 s, else the detach
//       is given up and CUPTI stays), on the program's thread. Prints at exit, per detach, the
//       wait for that call, the finalize, and before the next window the attach and the first
//       switch on
//   BARE_CUPTI_DEVICE_BUFFER=BYTES
//       CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, the device memory per context where CUPTI keeps
//       the timestamps of kernels, copies and memsets (CUPTI's default ~3.2 MB, ~100,000 of them)
//   BARE_CUPTI_HOST_PINNED=1
//       CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED: those timestamps in pinned host
//       memory instead of device memory (CUPTI's default before CUDA 12.0 Update 1)
//   BARE_CUPTI_PER_THREAD_BUFFERS=0
//       CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER off: one activity buffer shared by the
//       program's threads instead of one per thread
//   BARE_CUPTI_SYSTEM_TIDS=1
//       cuptiSetThreadIdType(SYSTEM), as cuscope sets it (the records' thread ids are the kernel's
//       thread ids, not pthread handles)
//   BARE_CUPTI_FLUSH_PERIOD_MS=MS
//       cuptiActivityFlushPeriod(MS), as cuscope sets it (500 by default): CUPTI's own thread hands
//       over partly filled buffers every MS
//   BARE_CUPTI_VERBOSE=1
//       print what was enabled on stderr
//
// A bad setting ends the process (exit status 2) rather than measure something else.
#include <cupti.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "lib/core/api_names.h"
#include "lib/cupti/activity_kinds.h"

namespace {

using cuscope::cupti::ActivityKindName;
using cuscope::cupti::kActivityKinds;

[[noreturn]] void Refuse(const std::string& message) {
  std::fprintf(stderr, "bare_cupti_injection: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

bool EnvIs(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v != nullptr && value == v;
}

// BARE_CUPTI_KINDS as activity kinds; every kind when unset.
std::vector<CUpti_ActivityKind> RequestedKinds() {
  std::vector<CUpti_ActivityKind> kinds;
  const char* env = std::getenv("BARE_CUPTI_KINDS");
  if (env == nullptr) {
    for (const ActivityKindName& k : kActivityKinds) kinds.push_back(k.kind);
    return kinds;
  }
  std::string_view rest = env;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const ActivityKindName* found = nullptr;
    for (const ActivityKindName& k : kActivityKinds) {
      if (name == k.name) found = &k;
    }
    if (found == nullptr) Refuse("unknown kind '" + std::string(name) + "' in BARE_CUPTI_KINDS");
    kinds.push_back(found->kind);
  }
  return kinds;
}

// Which APIs' lean calls a setting (BARE_CUPTI_API, BARE_CUPTI_CALLBACK) names.
struct LeanApis {
  bool runtime = false;
  bool driver = false;
  bool no_launch = false;  // the kernel launches left out
  bool any() const { return runtime || driver; }
};
LeanApis g_lean_records;  // BARE_CUPTI_API, for the per-call choice

// Whether the records (or callbacks) of a call are part of a setting's choice.
bool KeptCall(const char* name, const LeanApis& choice = g_lean_records) {
  if (!cuscope::core::CollectedWhenLean(name)) return false;
  if (!choice.no_launch) return true;
  const cuscope::core::ApiTraits traits = cuscope::core::ClassifyApi(name);
  return traits.category != cuscope::core::ApiCategory::kLaunch || traits.graph_launch;
}

LeanApis ParseLeanApis(const char* variable) {
  const char* v = std::getenv(variable);
  if (v == nullptr) return {};
  const std::string_view value = v;
  if (value == "lean") return {true, true};
  if (value == "runtime-lean") return {true, false};
  if (value == "driver-lean") return {false, true};
  if (value == "lean-nolaunch") return {true, true, true};
  Refuse(std::string(variable) + ": expected lean, runtime-lean, driver-lean or lean-nolaunch");
}

// ---- BARE_CUPTI_CHECK: which kernels a timed call or an API record shares its id with --------
bool g_check = false;
std::mutex g_check_mu;
std::unordered_set<uint32_t> g_runtime_ids, g_driver_ids;
std::vector<uint32_t> g_kernel_ids;
uint64_t g_records_by_kind[64] = {};
// With BARE_CUPTI_LATENCY: each kernel's queued and submitted timestamps, and each runtime
// record's span, to place the queued time against its launch call.
struct KernelTimes {
  uint32_t correlation_id;
  uint64_t queued, submitted, start;
};
std::vector<KernelTimes> g_kernel_times;
std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> g_runtime_spans;

void NoteCallId(CUpti_CallbackDomain domain, uint32_t id) {
  std::lock_guard<std::mutex> lock(g_check_mu);
  (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? g_runtime_ids : g_driver_ids).insert(id);
}

void CheckBuffer(uint8_t* buffer, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(g_check_mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    ++g_records_by_kind[static_cast<size_t>(record->kind) % 64];
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      g_kernel_ids.push_back(kernel->correlationId);
      g_kernel_times.push_back({kernel->correlationId, kernel->queued, kernel->submitted, kernel->start});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      g_runtime_ids.insert(api->correlationId);
      g_runtime_spans[api->correlationId] = {api->start, api->end};
    } else if (record->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      g_driver_ids.insert(reinterpret_cast<const CUpti_ActivityAPI*>(record)->correlationId);
    }
  }
}

// The values at `quantiles` of `v`, each printed with `format` and a space ("-" when empty).
std::string Percentiles(std::vector<double> v, std::initializer_list<double> quantiles, const char* format) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  std::string out;
  char cell[32];
  for (double q : quantiles) {
    std::snprintf(cell, sizeof(cell), format, v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]);
    out += cell;
    out += ' ';
  }
  return out;
}

void PrintCheck() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_check_mu);
  std::fprintf(stderr, "bare_cupti_injection: records by kind:");
  for (size_t k = 0; k < 64; ++k) {
    if (g_records_by_kind[k] != 0) std::fprintf(stderr, " %zu=%llu", k, static_cast<unsigned long long>(g_records_by_kind[k]));
  }
  size_t by_runtime = 0, by_driver = 0;
  for (uint32_t id : g_kernel_ids) {
    by_runtime += g_runtime_ids.count(id);
    by_driver += g_driver_ids.count(id);
  }
  std::fprintf(stderr, "\nbare_cupti_injection: %zu kernels; ids shared with a runtime call %zu, with a driver call %zu; "
               "ids of runtime calls %zu, of driver calls %zu\n",
               g_kernel_ids.size(), by_runtime, by_driver, g_runtime_ids.size(), g_driver_ids.size());
  // Where the queued timestamp falls: inside its launch call, before or after it (ns from the
  // call's start, and to its end), and how long before the kernel starts.
  size_t known = 0, submitted_known = 0, inside = 0, matched = 0;
  std::vector<double> from_start, to_end, to_kernel;
  for (const KernelTimes& k : g_kernel_times) {
    if (k.queued == CUPTI_TIMESTAMP_UNKNOWN || k.queued == 0) continue;
    ++known;
    if (k.submitted != CUPTI_TIMESTAMP_UNKNOWN && k.submitted != 0) ++submitted_known;
    to_kernel.push_back(static_cast<double>(static_cast<int64_t>(k.start) - static_cast<int64_t>(k.queued)));
    const auto it = g_runtime_spans.find(k.correlation_id);
    if (it == g_runtime_spans.end()) continue;
    ++matched;
    const auto [begin, end] = it->second;
    if (k.queued >= begin && k.queued <= end) ++inside;
    from_start.push_back(static_cast<double>(static_cast<int64_t>(k.queued) - static_cast<int64_t>(begin)));
    to_end.push_back(static_cast<double>(static_cast<int64_t>(end) - static_cast<int64_t>(k.queued)));
  }
  const auto percentiles = [](std::vector<double>& v) { return Percentiles(v, {0.0, 0.01, 0.5, 0.99, 1.0}, "%.0f"); };
  std::fprintf(stderr, "bare_cupti_injection: queued known %zu of %zu kernels, submitted known %zu; "
               "with a runtime launch record %zu, queued inside it %zu\n",
               known, g_kernel_times.size(), submitted_known, matched, inside);
  std::fprintf(stderr, "bare_cupti_injection: ns queued-call_start (min p1 p50 p99 max): %s\n", percentiles(from_start).c_str());
  std::fprintf(stderr, "bare_cupti_injection: ns call_end-queued (min p1 p50 p99 max): %s\n", percentiles(to_end).c_str());
  std::fprintf(stderr, "bare_cupti_injection: ns kernel_start-queued (min p1 p50 p99 max): %s\n", percentiles(to_kernel).c_str());
}

// ---- BARE_CUPTI_COUNT_CALLS: every runtime and driver call, counted ------------------------------
std::atomic<uint64_t> g_call_counts[2][4096];
thread_local int t_runtime_depth = 0;
std::atomic<uint64_t> g_driver_inside_runtime{0};

void CUPTIAPI CountCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (info->callbackSite != CUPTI_API_ENTER) {
    if (runtime) --t_runtime_depth;
    return;
  }
  if (runtime) ++t_runtime_depth;
  else if (t_runtime_depth > 0) g_driver_inside_runtime.fetch_add(1, std::memory_order_relaxed);
  g_call_counts[runtime ? 0 : 1][cbid % 4096].fetch_add(1, std::memory_order_relaxed);
}

void PrintCallCounts() {
  std::vector<std::pair<uint64_t, std::pair<int, uint32_t>>> counts;
  for (int d = 0; d < 2; ++d) {
    for (uint32_t cbid = 0; cbid < 4096; ++cbid) {
      if (uint64_t n = g_call_counts[d][cbid].load(); n != 0) counts.push_back({n, {d, cbid}});
    }
  }
  std::sort(counts.rbegin(), counts.rend());
  std::fprintf(stderr, "bare_cupti_injection: driver calls made inside runtime calls: %llu\n",
               static_cast<unsigned long long>(g_driver_inside_runtime.load()));
  for (size_t i = 0; i < counts.size() && i < 20; ++i) {
    const auto [d, cbid] = counts[i].second;
    const char* name = nullptr;
    cuptiGetCallbackName(d == 0 ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name);
    std::fprintf(stderr, "bare_cupti_injection: %10llu %s %s\n", static_cast<unsigned long long>(counts[i].first),
                 d == 0 ? "runtime" : "driver ", name != nullptr ? name : "?");
  }
}

// Enables record collection for the calls of one API that lean collection keeps; returns how many.
int EnableLeanCalls(CUpti_CallbackDomain domain, uint32_t cbid_count) {
  int enabled = 0;
  for (uint32_t cbid = 1; cbid < cbid_count; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!KeptCall(name)) continue;
    const CUptiResult r = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cuptiActivityEnableRuntimeApi(cbid, 1)
                                                                : cuptiActivityEnableDriverApi(cbid, 1);
    if (r != CUPTI_SUCCESS) Refuse(std::string("enabling the records of ") + name + " failed");
    ++enabled;
  }
  return enabled;
}

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 4 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (g_check) CheckBuffer(buffer, valid);
  std::free(buffer);
}

void CUPTIAPI IgnoreCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// One timed call, as a callback-based recorder would keep it.
struct TimedCall {
  uint32_t cbid;
  uint32_t correlation_id;
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t thread;
};
struct ThreadCalls {
  TimedCall calls[4096];
  size_t used = 0;
  uint64_t start_ns = 0;  // of the call in progress (the lean calls do not nest)
  uint64_t written = 0;
};
thread_local ThreadCalls t_calls;
std::atomic<uint64_t> g_timed_calls{0};

void CUPTIAPI TimeCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  ThreadCalls& t = t_calls;
  if (info->callbackSite == CUPTI_API_ENTER) {
    t.start_ns = now;
    return;
  }
  if (t.used == std::size(t.calls)) {  // a full buffer would be handed over here
    g_timed_calls.fetch_add(t.used, std::memory_order_relaxed);
    t.used = 0;
  }
  t.calls[t.used++] = TimedCall{cbid, info->correlationId, t.start_ns, now, 0};
  if (g_check) NoteCallId(domain, info->correlationId);
}

// Turns the callback for the calls of one API that BARE_CUPTI_CALLBACK keeps on or off; returns how many.
int SetLeanCallbacks(CUpti_SubscriberHandle subscriber, const LeanApis& choice, CUpti_CallbackDomain domain,
                     uint32_t cbid_count, bool on) {
  int enabled = 0;
  for (uint32_t cbid = 1; cbid < cbid_count; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!KeptCall(name, choice)) continue;
    if (cuptiEnableCallback(on ? 1 : 0, subscriber, domain, cbid) != CUPTI_SUCCESS) {
      Refuse(std::string("enabling the callback of ") + name + " failed");
    }
    ++enabled;
  }
  return enabled;
}

// Records of an API's lean calls, for a gated collection that starts after the program's first
// call: the whole kind, then every other call off (enabling kept calls one by one records nothing
// then, as cuscope's activity_selection.h says).
int SetLeanRecordsGated(CUpti_CallbackDomain domain, uint32_t cbid_count, bool on) {
  const CUpti_ActivityKind kind =
      domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  if (!on) {
    cuptiActivityDisable(kind);
    return 0;
  }
  if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) Refuse("enabling an API kind failed");
  int kept = 0;
  for (uint32_t cbid = 1; cbid < cbid_count; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (KeptCall(name)) {
      ++kept;
      continue;
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      (void)cuptiActivityEnableRuntimeApi(cbid, 0);
    } else {
      (void)cuptiActivityEnableDriverApi(cbid, 0);
    }
  }
  return kept;
}

// What the environment asks for, kept for BARE_CUPTI_GATE's windows.
struct Setup {
  std::vector<CUpti_ActivityKind> kinds;
  LeanApis records;
  LeanApis timed;
  bool gated = false;             // BARE_CUPTI_GATE=profiler
  bool at_context = false;        // BARE_CUPTI_GATE=context
  std::atomic<bool> context_seen{false};
  CUpti_SubscriberHandle subscriber = nullptr;
};
Setup g_setup;

bool g_toggling = false;  // BARE_CUPTI_TOGGLE: a duty cycle does not flush at every window's end

// Every kind and lean call on or off (BARE_CUPTI_GATE: at cuProfilerStart and cuProfilerStop).
void SetCollection(bool on) {
  const Setup& s = g_setup;
  for (CUpti_ActivityKind k : s.kinds) {
    if (!on) {
      cuptiActivityDisable(k);
    } else if (cuptiActivityEnable(k) != CUPTI_SUCCESS) {
      Refuse("cuptiActivityEnable(" + std::to_string(k) + ") failed");
    }
  }
  if (s.records.runtime) SetLeanRecordsGated(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, on);
  if (s.records.driver) SetLeanRecordsGated(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, on);
  if (s.timed.runtime) SetLeanCallbacks(s.subscriber, s.timed, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, on);
  if (s.timed.driver) SetLeanCallbacks(s.subscriber, s.timed, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, on);
  if (!on && !g_toggling) cuptiActivityFlushAll(0);
}

// ---- BARE_CUPTI_TOGGLE: a duty cycle's windows, and what each recorded ------------------------
struct ToggleWindow {
  uint64_t enabling, enabled, disabling, disabled;  // CUPTI's clock around the two switches
};
std::mutex g_toggle_mu;
std::vector<ToggleWindow> g_toggle_windows;
std::atomic<bool> g_toggle_stop{false};

uint64_t CuptiNow() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

void SetCollection(bool on);

// BARE_CUPTI_DETACH: from the injection's own thread, or at the exit of the program's next call.
enum class DetachAt { kNever, kOwnThread, kCallExit };
DetachAt g_detach_at = DetachAt::kNever;

void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

double MicrosecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// What each detach and attach took (us), printed at exit.
struct DetachTimes {
  std::mutex mu;
  std::vector<double> wait_us;      // armed until the program's call took it (kCallExit)
  std::vector<double> finalize_us;  // unsubscribe + cuptiFinalize
  std::vector<double> attach_us;    // callbacks registered and subscribed again
  std::vector<double> first_on_us;  // the first switch on after an attach, into the live context
  size_t given_up = 0;              // no runtime call came within the wait: CUPTI stayed
};
DetachTimes g_detach_times;

void Finalize() {
  const auto t0 = std::chrono::steady_clock::now();
  if (g_setup.subscriber != nullptr && cuptiUnsubscribe(g_setup.subscriber) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bare_cupti_injection: cuptiUnsubscribe failed\n");
  }
  g_setup.subscriber = nullptr;
  const CUptiResult r = cuptiFinalize();
  if (r != CUPTI_SUCCESS) std::fprintf(stderr, "bare_cupti_injection: cuptiFinalize failed (%d)\n", static_cast<int>(r));
  const double us = MicrosecondsSince(t0);
  std::lock_guard<std::mutex> lock(g_detach_times.mu);
  g_detach_times.finalize_us.push_back(us);
}

// kCallExit: armed by the cycle's thread, taken by the first runtime call's exit on any of the
// program's threads (the exchange makes exactly one the owner), or taken back on a time out.
std::atomic<bool> g_detach_pending{false};  // the runtime domain is on for the detach
std::atomic<bool> g_detach_armed{false};
std::mutex g_detach_mu;
std::condition_variable g_detach_cv;
bool g_detach_done = false;  // g_detach_mu

void FinalizeAtCallExit() {
  Finalize();
  {
    std::lock_guard<std::mutex> lock(g_detach_mu);
    g_detach_done = true;
  }
  g_detach_cv.notify_all();
}

// True when CUPTI was let go of.
bool DetachAtNextCallExit() {
  {
    std::lock_guard<std::mutex> lock(g_detach_mu);
    g_detach_done = false;
  }
  g_detach_pending.store(true);
  if (cuptiEnableDomain(1, g_setup.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bare_cupti_injection: enabling the runtime domain for the detach failed\n");
    g_detach_pending.store(false);
    return false;
  }
  const auto armed_at = std::chrono::steady_clock::now();
  g_detach_armed.store(true);
  std::unique_lock<std::mutex> lock(g_detach_mu);
  if (!g_detach_cv.wait_for(lock, std::chrono::seconds(2), [] { return g_detach_done; })) {
    if (g_detach_armed.exchange(false)) {  // no call took it: CUPTI stays, its domain off again
      lock.unlock();
      (void)cuptiEnableDomain(0, g_setup.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
      g_detach_pending.store(false);
      std::lock_guard<std::mutex> times_lock(g_detach_times.mu);
      ++g_detach_times.given_up;
      return false;
    }
    g_detach_cv.wait(lock, [] { return g_detach_done; });  // taken just now: it finishes
  }
  g_detach_pending.store(false);
  const double waited = MicrosecondsSince(armed_at);
  std::lock_guard<std::mutex> times_lock(g_detach_times.mu);
  g_detach_times.wait_us.push_back(waited);
  return true;
}

// BARE_CUPTI_DETACH: CUPTI let go of once the collection is off; true when it was.
bool Detach() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (g_detach_at == DetachAt::kCallExit) return DetachAtNextCallExit();
  Finalize();
  return true;
}

void PrintDetachTimes() {
  std::lock_guard<std::mutex> lock(g_detach_times.mu);
  const auto spread = [](const std::vector<double>& v) { return Percentiles(v, {0.0, 0.1, 0.5, 0.9, 1.0}, "%.0f"); };
  std::fprintf(stderr,
               "bare_cupti_injection: detach (%s): %zu detached, %zu given up, %zu attached again (min p10 p50 p90 max us):\n"
               "  wait for the program's call: %s\n  unsubscribe + finalize: %s\n  attach: %s\n"
               "  first switch on after an attach: %s\n",
               g_detach_at == DetachAt::kCallExit ? "at a call's exit" : "own thread", g_detach_times.finalize_us.size(),
               g_detach_times.given_up, g_detach_times.attach_us.size(), spread(g_detach_times.wait_us).c_str(),
               spread(g_detach_times.finalize_us).c_str(), spread(g_detach_times.attach_us).c_str(),
               spread(g_detach_times.first_on_us).c_str());
}

// And taken up again before the next window: what the injection set up, but the kinds.
bool Reattach() {
  const auto t0 = std::chrono::steady_clock::now();
  if (cuptiActivityRegisterCallbacks(Requested, Completed) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bare_cupti_injection: cuptiActivityRegisterCallbacks failed after a detach\n");
    return false;
  }
  if (cuptiSubscribe(&g_setup.subscriber, OnCallback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bare_cupti_injection: cuptiSubscribe failed after a detach\n");
    return false;
  }
  const double us = MicrosecondsSince(t0);
  std::lock_guard<std::mutex> lock(g_detach_times.mu);
  g_detach_times.attach_us.push_back(us);
  return true;
}

// BARE_CUPTI_ONCE: on at `at_ms` after the injection (already on when 0), off `for_ms` later.
void OnceLoop(uint64_t at_ms, uint64_t for_ms) {
  if (at_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(at_ms));
    SetCollection(true);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(for_ms));
  SetCollection(false);
  if (g_detach_at != DetachAt::kNever) (void)Detach();
}

// BARE_CUPTI_CYCLE: on for `window_ms` in the middle of every `period_ms`, until the process ends.
void CycleLoop(uint64_t period_ms, uint64_t window_ms) {
  const auto gap = std::chrono::milliseconds(period_ms - window_ms);
  bool detached = false;
  while (true) {
    std::this_thread::sleep_for(gap / 2);
    if (detached && !Reattach()) return;
    const auto switching_on = std::chrono::steady_clock::now();
    SetCollection(true);
    if (detached) {
      const double us = MicrosecondsSince(switching_on);
      std::lock_guard<std::mutex> lock(g_detach_times.mu);
      g_detach_times.first_on_us.push_back(us);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
    SetCollection(false);
    detached = g_detach_at != DetachAt::kNever && Detach();
    std::this_thread::sleep_for(gap - gap / 2);
  }
}

void ToggleLoop(uint64_t period_us, uint64_t window_us) {
  const auto period = std::chrono::microseconds(period_us);
  auto slot = std::chrono::steady_clock::now();
  while (!g_toggle_stop.load()) {
    std::this_thread::sleep_until(slot + (period - std::chrono::microseconds(window_us)) / 2);
    // Held through the window: the report at exit waits for the switch off.
    std::lock_guard<std::mutex> lock(g_toggle_mu);
    if (g_toggle_stop.load()) return;
    ToggleWindow w{};
    w.enabling = CuptiNow();
    SetCollection(true);
    w.enabled = CuptiNow();
    std::this_thread::sleep_for(std::chrono::microseconds(window_us));
    w.disabling = CuptiNow();
    SetCollection(false);
    w.disabled = CuptiNow();
    g_toggle_windows.push_back(w);
    slot += period;
  }
}

// Per window with kernels: the switches' durations, the first record's start after the switch on
// completed, the last one's before the switch off began, and the records against what the
// window's steady middle half would predict for the whole of it (from the start of enabling to
// the start of disabling: the duty cycle's window as its control thread sees it).
void PrintToggle() {
  {
    std::lock_guard<std::mutex> lock(g_toggle_mu);
    g_toggle_stop.store(true);
  }
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_toggle_mu);
  std::lock_guard<std::mutex> records_lock(g_check_mu);
  std::vector<uint64_t> starts;
  for (const KernelTimes& k : g_kernel_times) starts.push_back(k.start);
  std::sort(starts.begin(), starts.end());
  const auto deciles = [](const std::vector<double>& v) { return Percentiles(v, {0.0, 0.1, 0.5, 0.9, 1.0}, "%.1f"); };
  const auto count = [&starts](uint64_t a, uint64_t b) {
    return static_cast<double>(std::lower_bound(starts.begin(), starts.end(), b) -
                               std::lower_bound(starts.begin(), starts.end(), a));
  };
  std::vector<double> enable_us, disable_us, first_us, last_us, ratio, before_on, after_off;
  size_t with_kernels = 0;
  for (size_t i = 0; i < g_toggle_windows.size(); ++i) {
    const ToggleWindow& w = g_toggle_windows[i];
    const uint64_t next = i + 1 < g_toggle_windows.size() ? g_toggle_windows[i + 1].enabling : UINT64_MAX;
    const uint64_t prev = i > 0 ? g_toggle_windows[i - 1].disabled : 0;
    const double total = count(prev, next);
    if (total == 0) continue;
    ++with_kernels;
    enable_us.push_back(static_cast<double>(w.enabled - w.enabling) / 1e3);
    disable_us.push_back(static_cast<double>(w.disabled - w.disabling) / 1e3);
    auto first = std::lower_bound(starts.begin(), starts.end(), prev);
    auto last = std::lower_bound(starts.begin(), starts.end(), next);
    first_us.push_back((static_cast<double>(*first) - static_cast<double>(w.enabled)) / 1e3);
    last_us.push_back((static_cast<double>(w.disabling) - static_cast<double>(*std::prev(last))) / 1e3);
    before_on.push_back(count(prev, w.enabled));
    after_off.push_back(count(w.disabling, next));
    const uint64_t quarter = (w.disabling - w.enabled) / 4;
    const double middle = count(w.enabled + quarter, w.disabling - quarter);
    if (middle > 0) {
      const double predicted = middle / static_cast<double>(2 * quarter) * static_cast<double>(w.disabling - w.enabling);
      ratio.push_back(total / predicted);
    }
  }
  std::fprintf(stderr, "bare_cupti_injection: toggle: %zu windows, %zu with kernels, %zu kernel records (min p10 p50 p90 max):\n",
               g_toggle_windows.size(), with_kernels, starts.size());
  std::fprintf(stderr, "  enable took us: %s\n  disable took us: %s\n", deciles(enable_us).c_str(),
               deciles(disable_us).c_str());
  std::fprintf(stderr, "  first record start - enabled us: %s\n  disabling - last record start us: %s\n",
               deciles(first_us).c_str(), deciles(last_us).c_str());
  std::fprintf(stderr, "  records starting before enabled: %s\n  records starting after disabling: %s\n",
               deciles(before_on).c_str(), deciles(after_off).c_str());
  std::fprintf(stderr, "  records / (middle-half rate x window from enabling to disabling): %s\n",
               deciles(ratio).c_str());
}

// The one subscriber: the gate's cuProfilerStart/Stop (reached from cudaProfilerStart/Stop too),
// and the timed calls.
void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  // BARE_CUPTI_DETACH=exit: the runtime domain is on only for the detach; the first call's exit
  // takes it, every other call of the domain passes.
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && g_detach_pending.load(std::memory_order_relaxed)) {
    if (info->callbackSite == CUPTI_API_EXIT && g_detach_armed.exchange(false)) FinalizeAtCallExit();
    return;
  }
  if (g_setup.gated && domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart || cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
    const bool start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    // The window is the program's code between the two calls: on after start, off before stop.
    if (start == (info->callbackSite == CUPTI_API_EXIT)) SetCollection(start);
    return;
  }
  if (g_setup.at_context && domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    if (!g_setup.context_seen.exchange(true)) SetCollection(true);
    return;
  }
  TimeCallback(userdata, domain, cbid, data);
}

// BARE_CUPTI_DEVICE_BUFFER, _HOST_PINNED, _PER_THREAD_BUFFERS, _SYSTEM_TIDS and _FLUSH_PERIOD_MS,
// set before the callbacks are registered and any kind is enabled (CUPTI reads the attributes
// then); returns what was set, for VERBOSE.
std::string SetActivityAttributes() {
  std::string set;
  if (const char* v = std::getenv("BARE_CUPTI_DEVICE_BUFFER"); v != nullptr) {
    char* end = nullptr;
    size_t bytes = std::strtoull(v, &end, 10);
    if (end == v || *end != '\0' || bytes == 0) Refuse("BARE_CUPTI_DEVICE_BUFFER: expected a size in bytes");
    size_t size = sizeof(bytes);
    if (cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes) != CUPTI_SUCCESS) {
      Refuse("setting CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE failed");
    }
    set += "device buffer " + std::to_string(bytes) + " bytes ";
  }
  const auto set_flag = [&set](const char* variable, CUpti_ActivityAttribute attribute, uint8_t value,
                               const char* said) {
    const char* v = std::getenv(variable);
    if (v == nullptr) return;
    if (std::string_view(v) != (value != 0 ? "1" : "0")) Refuse(std::string(variable) + ": expected " + (value ? "1" : "0"));
    size_t size = sizeof(value);
    if (cuptiActivitySetAttribute(attribute, &size, &value) != CUPTI_SUCCESS) {
      Refuse(std::string("setting ") + variable + "'s attribute failed");
    }
    set += said;
  };
  set_flag("BARE_CUPTI_HOST_PINNED", CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, 1, "host pinned ");
  set_flag("BARE_CUPTI_PER_THREAD_BUFFERS", CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, 0, "one shared buffer ");
  if (EnvIs("BARE_CUPTI_SYSTEM_TIDS", "1")) {
    if (cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS) Refuse("cuptiSetThreadIdType failed");
    set += "system thread ids ";
  } else if (std::getenv("BARE_CUPTI_SYSTEM_TIDS") != nullptr) {
    Refuse("BARE_CUPTI_SYSTEM_TIDS: expected 1");
  }
  if (const char* v = std::getenv("BARE_CUPTI_FLUSH_PERIOD_MS"); v != nullptr) {
    char* end = nullptr;
    const unsigned long ms = std::strtoul(v, &end, 10);
    if (end == v || *end != '\0' || ms == 0 || ms > 60000) Refuse("BARE_CUPTI_FLUSH_PERIOD_MS: expected 1..60000");
    if (cuptiActivityFlushPeriod(static_cast<uint32_t>(ms)) != CUPTI_SUCCESS) Refuse("cuptiActivityFlushPeriod failed");
    set += "flush period " + std::to_string(ms) + " ms ";
  }
  if (!set.empty()) set.pop_back();
  return set;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  Setup& s = g_setup;
  s.records = ParseLeanApis("BARE_CUPTI_API");
  g_lean_records = s.records;
  s.timed = ParseLeanApis("BARE_CUPTI_CALLBACK");
  s.gated = EnvIs("BARE_CUPTI_GATE", "profiler");
  s.at_context = EnvIs("BARE_CUPTI_GATE", "context");
  if (!s.gated && !s.at_context && std::getenv("BARE_CUPTI_GATE") != nullptr) {
    Refuse("BARE_CUPTI_GATE: expected profiler or context");
  }
  uint64_t toggle_period_us = 0, toggle_window_us = 0;
  if (const char* v = std::getenv("BARE_CUPTI_TOGGLE"); v != nullptr) {
    if (std::sscanf(v, "%lu,%lu", &toggle_period_us, &toggle_window_us) != 2 || toggle_window_us == 0 ||
        toggle_window_us >= toggle_period_us) {
      Refuse("BARE_CUPTI_TOGGLE: expected PERIOD_US,WINDOW_US with 0 < WINDOW_US < PERIOD_US");
    }
    if (s.gated || s.at_context) Refuse("BARE_CUPTI_TOGGLE is a gate of its own: leave BARE_CUPTI_GATE out");
    g_toggling = true;
  }
  uint64_t once_at_ms = 0, once_for_ms = 0;
  bool once = false;
  if (const char* v = std::getenv("BARE_CUPTI_ONCE"); v != nullptr) {
    if (std::sscanf(v, "%lu,%lu", &once_at_ms, &once_for_ms) != 2 || once_for_ms == 0) {
      Refuse("BARE_CUPTI_ONCE: expected AT_MS,FOR_MS with FOR_MS > 0");
    }
    if (s.gated || s.at_context || g_toggling) Refuse("BARE_CUPTI_ONCE is a gate of its own: leave BARE_CUPTI_GATE and BARE_CUPTI_TOGGLE out");
    once = true;
  }
  uint64_t cycle_period_ms = 0, cycle_window_ms = 0;
  bool cycle = false;
  if (const char* v = std::getenv("BARE_CUPTI_CYCLE"); v != nullptr) {
    if (std::sscanf(v, "%lu,%lu", &cycle_period_ms, &cycle_window_ms) != 2 || cycle_window_ms == 0 ||
        cycle_window_ms >= cycle_period_ms) {
      Refuse("BARE_CUPTI_CYCLE: expected PERIOD_MS,WINDOW_MS with 0 < WINDOW_MS < PERIOD_MS");
    }
    if (s.gated || s.at_context || g_toggling || once) {
      Refuse("BARE_CUPTI_CYCLE is a gate of its own: leave BARE_CUPTI_GATE, BARE_CUPTI_TOGGLE and BARE_CUPTI_ONCE out");
    }
    cycle = true;
  }
  if (const char* v = std::getenv("BARE_CUPTI_DETACH"); v != nullptr) {
    const std::string_view at = v;
    if (at != "1" && at != "exit") Refuse("BARE_CUPTI_DETACH: expected 1 (the injection's own thread) or exit (a call's exit)");
    g_detach_at = at == "exit" ? DetachAt::kCallExit : DetachAt::kOwnThread;
    std::atexit(PrintDetachTimes);
  }
  if (g_detach_at != DetachAt::kNever && !once && !cycle) Refuse("BARE_CUPTI_DETACH detaches after a window: set BARE_CUPTI_ONCE or BARE_CUPTI_CYCLE too");
  const bool count_calls = EnvIs("BARE_CUPTI_COUNT_CALLS", "1");
  const bool subscribe_only = EnvIs("BARE_CUPTI_SUBSCRIBE", "1");
  g_check = EnvIs("BARE_CUPTI_CHECK", "1");
  if (s.timed.any() && s.records.any()) Refuse("BARE_CUPTI_CALLBACK and BARE_CUPTI_API both time the calls: choose one");
  if (count_calls && (s.timed.any() || subscribe_only || s.gated || s.at_context)) {
    Refuse("BARE_CUPTI_COUNT_CALLS takes CUPTI's one subscriber: use it alone");
  }
  if (subscribe_only && (s.timed.any() || s.gated || s.at_context)) {
    Refuse("BARE_CUPTI_SUBSCRIBE is a subscriber alone");
  }
  s.kinds = RequestedKinds();
  if (s.records.any()) {
    // Enabling RUNTIME or DRIVER would record every call, the opposite of lean.
    std::erase_if(s.kinds, [](CUpti_ActivityKind k) {
      return k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER;
    });
  }
  std::string attributes = SetActivityAttributes();
  if (EnvIs("BARE_CUPTI_LATENCY", "1")) {
    if (cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS) Refuse("cuptiActivityEnableLatencyTimestamps failed");
    attributes += attributes.empty() ? "latency timestamps" : " latency timestamps";
  } else if (std::getenv("BARE_CUPTI_LATENCY") != nullptr) {
    Refuse("BARE_CUPTI_LATENCY: expected 1");
  }
  if (cuptiActivityRegisterCallbacks(Requested, Completed) != CUPTI_SUCCESS) {
    Refuse("cuptiActivityRegisterCallbacks failed");
  }
  if (s.timed.any() || s.gated || s.at_context || g_toggling || once || cycle) {
    if (cuptiSubscribe(&s.subscriber, OnCallback, nullptr) != CUPTI_SUCCESS) Refuse("cuptiSubscribe failed");
  }
  int runtime_calls = 0, driver_calls = 0;
  if (s.gated) {
    for (CUpti_CallbackId cbid : {CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop}) {
      if (cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) != CUPTI_SUCCESS) {
        Refuse("enabling the cuProfilerStart/Stop callbacks failed");
      }
    }
  } else if (s.at_context) {
    if (cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED) !=
        CUPTI_SUCCESS) {
      Refuse("enabling the CONTEXT_CREATED callback failed");
    }
  } else if (g_toggling) {
    std::thread(ToggleLoop, toggle_period_us, toggle_window_us).detach();
  } else if (once && once_at_ms > 0) {
    std::thread(OnceLoop, once_at_ms, once_for_ms).detach();
  } else if (cycle) {
    std::thread(CycleLoop, cycle_period_ms, cycle_window_ms).detach();
  } else {
    for (CUpti_ActivityKind k : s.kinds) {
      if (cuptiActivityEnable(k) != CUPTI_SUCCESS) Refuse("cuptiActivityEnable(" + std::to_string(k) + ") failed");
    }
    // After the kinds, as cuscope does: a kind enabled later would override the per-call choice.
    if (s.records.runtime) runtime_calls = EnableLeanCalls(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    if (s.records.driver) driver_calls = EnableLeanCalls(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    if (s.timed.runtime) {
      runtime_calls = SetLeanCallbacks(s.subscriber, s.timed, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, true);
    }
    if (s.timed.driver) {
      driver_calls = SetLeanCallbacks(s.subscriber, s.timed, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, true);
    }
  }
  if (once && once_at_ms == 0) std::thread(OnceLoop, 0, once_for_ms).detach();
  if (count_calls) {
    CUpti_SubscriberHandle subscriber = nullptr;
    if (cuptiSubscribe(&subscriber, CountCallback, nullptr) != CUPTI_SUCCESS) Refuse("cuptiSubscribe failed");
    if (cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
        cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS) {
      Refuse("cuptiEnableDomain failed");
    }
    std::atexit(PrintCallCounts);
  } else if (subscribe_only) {
    CUpti_SubscriberHandle subscriber = nullptr;
    if (cuptiSubscribe(&subscriber, IgnoreCallback, nullptr) != CUPTI_SUCCESS) Refuse("cuptiSubscribe failed");
  }
  if (g_check) std::atexit(PrintCheck);
  if (g_toggling) {
    if (!g_check) Refuse("BARE_CUPTI_TOGGLE reads the records: set BARE_CUPTI_CHECK=1 too");
    std::atexit(PrintToggle);
  }
  if (EnvIs("BARE_CUPTI_VERBOSE", "1")) {
    std::fprintf(stderr,
                 "bare_cupti_injection: %zu kinds, lean calls: %d runtime, %d driver, subscriber %s, timed by callback %s, "
                 "gated by cuProfilerStart/Stop %s, enabled at the first context %s, attributes: %s\n",
                 s.kinds.size(), runtime_calls, driver_calls, subscribe_only ? "yes" : "no", s.timed.any() ? "yes" : "no",
                 s.gated ? "yes" : "no", s.at_context ? "yes" : "no", attributes.empty() ? "CUPTI's defaults" : attributes.c_str());
  }
  return 1;
}
