// A bare CUPTI collector as an injection library: it enables activity kinds as cuscope does and
// discards every buffer unread. Injected beside a program (CUDA_INJECTION64_PATH), it measures
// what CUPTI itself costs, the floor under any CUPTI-based tool. What it enables comes from the
// environment, so that each cuscope configuration has its bare twin:
//
//   BARE_CUPTI_KINDS=kernel,memcpy,memset,runtime,driver,sync,nvtx,memory,overhead
//       the activity kinds, by cuscope's names for them (default: all of these)
//   BARE_CUPTI_API=lean
//       instead of the runtime and driver kinds (every call), only the calls cuscope's lean
//       collection records, enabled call by call: the callback ids whose names
//       cuscope::core::CollectedWhenLean keeps, the very selection cuscope makes
//   BARE_CUPTI_SUBSCRIBE=1
//       also subscribe a no-op callback with no callback enabled: what a subscriber alone costs
//   BARE_CUPTI_CALLBACK=lean
//       the lean calls timed by a callback instead of CUPTI's API records: at entry and exit the
//       callback reads CUPTI's clock and, at exit, writes a 32-byte record (call, correlation id,
//       start, end) into a per-thread buffer; what an API record costs done by hand
//   BARE_CUPTI_VERBOSE=1
//       print what was enabled on stderr
//
// A bad setting ends the process (exit status 2) rather than measure something else.
#include <cupti.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <atomic>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
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

// Enables record collection for the calls of one API that lean collection keeps; returns how many.
int EnableLeanCalls(CUpti_CallbackDomain domain, uint32_t cbid_count) {
  int enabled = 0;
  for (uint32_t cbid = 1; cbid < cbid_count; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!cuscope::core::CollectedWhenLean(name)) continue;
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

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

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

void CUPTIAPI TimeCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId cbid, const void* data) {
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
}

// Enables the callback for the calls of one API that lean collection keeps; returns how many.
int EnableLeanCallbacks(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, uint32_t cbid_count) {
  int enabled = 0;
  for (uint32_t cbid = 1; cbid < cbid_count; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!cuscope::core::CollectedWhenLean(name)) continue;
    if (cuptiEnableCallback(1, subscriber, domain, cbid) != CUPTI_SUCCESS) {
      Refuse(std::string("enabling the callback of ") + name + " failed");
    }
    ++enabled;
  }
  return enabled;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const bool lean = EnvIs("BARE_CUPTI_API", "lean");
  if (!lean && std::getenv("BARE_CUPTI_API") != nullptr) Refuse("BARE_CUPTI_API: expected lean");
  std::vector<CUpti_ActivityKind> kinds = RequestedKinds();
  if (lean) {
    // Enabling RUNTIME or DRIVER would record every call, the opposite of lean.
    std::erase_if(kinds, [](CUpti_ActivityKind k) {
      return k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER;
    });
  }
  if (cuptiActivityRegisterCallbacks(Requested, Completed) != CUPTI_SUCCESS) {
    Refuse("cuptiActivityRegisterCallbacks failed");
  }
  for (CUpti_ActivityKind k : kinds) {
    if (cuptiActivityEnable(k) != CUPTI_SUCCESS) Refuse("cuptiActivityEnable(" + std::to_string(k) + ") failed");
  }
  // After the kinds, as cuscope does: a kind enabled later would override the per-call choice.
  int runtime_calls = 0, driver_calls = 0;
  if (lean) {
    runtime_calls = EnableLeanCalls(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    driver_calls = EnableLeanCalls(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  }
  const bool timed = EnvIs("BARE_CUPTI_CALLBACK", "lean");
  if (!timed && std::getenv("BARE_CUPTI_CALLBACK") != nullptr) Refuse("BARE_CUPTI_CALLBACK: expected lean");
  if (timed && lean) Refuse("BARE_CUPTI_CALLBACK and BARE_CUPTI_API both time the calls: choose one");
  if (timed) {
    CUpti_SubscriberHandle subscriber = nullptr;
    if (cuptiSubscribe(&subscriber, TimeCallback, nullptr) != CUPTI_SUCCESS) Refuse("cuptiSubscribe failed");
    runtime_calls = EnableLeanCallbacks(subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    driver_calls = EnableLeanCallbacks(subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  } else if (EnvIs("BARE_CUPTI_SUBSCRIBE", "1")) {
    CUpti_SubscriberHandle subscriber = nullptr;
    if (cuptiSubscribe(&subscriber, IgnoreCallback, nullptr) != CUPTI_SUCCESS) Refuse("cuptiSubscribe failed");
  }
  if (EnvIs("BARE_CUPTI_VERBOSE", "1")) {
    std::fprintf(stderr, "bare_cupti_injection: %zu kinds, lean calls: %d runtime, %d driver, subscriber %s, timed by callback %s\n",
                 kinds.size(), runtime_calls, driver_calls, EnvIs("BARE_CUPTI_SUBSCRIBE", "1") ? "yes" : "no",
                 timed ? "yes" : "no");
  }
  return 1;
}
