// What CUPTI is asked to record: activity kinds, and under lean collection (the kind "api") only
// the runtime and driver calls the analyzer reads.
//
// Lean collection alone ("api" without "runtime" or "driver") records those calls through
// callbacks (call_timer.h): CUPTI's API records cost per call of the program, whichever calls are
// kept. The API records below serve "api" beside an API recorded whole.
//
// Lean collection enables the API's whole kind (RUNTIME, DRIVER) and then turns every other call
// off one by one (cuptiActivityEnableRuntimeApi/DriverApi with 0). Turning the kept calls on one by
// one instead, without the kind, records nothing once the program has made its first call: on the
// H200 (CUDA 13.0) a window opened after 1,000 launches got 0 of the next 1,000 cudaLaunchKernel
// records that way, and all 1,000 the way used here. The per-call choice is process-wide and is
// undone by the next enabling of the kind, so a window that opens again chooses again. An API
// whose kind the configuration names as a whole ("runtime", "driver") keeps every call.
//
// Kinds enabled after the program's first call, with the GPU counters or the Range Profiler then
// started, are not reliable on the H200 (CUDA 13.0, PyTorch, --delay 1 or 2): the window's kernels
// got one correlation id (8,858 kernels with id 3; 9,917 with one id) or all but a few were lost,
// whether the API calls were recorded lean, whole or not at all. Enabled before the first call,
// with the same profilers started later, every id stayed distinct (20,283 kernels). So such
// sessions enable the kinds at their start and hold them (CaptureController::HoldKinds).
//
// Kernel metrics call cuStreamIsCapturing at each launch they consider, inside the program's
// launch and with its correlation id: its driver records are off whenever driver calls are
// recorded and kernel metrics are on (own_calls), so no kernel seems launched twice. The
// program's own cudaStreamIsCapturing stays in the runtime records.
//
// The runtime makes its own driver calls inside
// a runtime call without driver records; the driver calls it makes outside one (its lazy start-up
// queries, module loads) are driver records, and the lean choice keeps only module loads of them.
#ifndef CUSCOPE_LIB_CUPTI_ACTIVITY_SELECTION_H_
#define CUSCOPE_LIB_CUPTI_ACTIVITY_SELECTION_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <cupti.h>

#include "absl/status/status.h"
#include "lib/settings/config.h"
#include "lib/cupti/cupti_api.h"

namespace cuscope::cupti {

struct ApiCallId {
  v1::ApiDomain domain = v1::API_DOMAIN_UNKNOWN;
  uint32_t cbid = 0;
};

// The calls of one API that lean collection records (core::CollectedWhenLean), by the names CUPTI
// gives their callback ids.
std::vector<uint32_t> LeanCallIds(v1::ApiDomain domain, CuptiApi& cupti);

class ActivitySelection {
 public:
  // Lean collection by callbacks (call_timer.h) instead of API records: "api" with neither API
  // named whole, unless the configuration asks for records. Then the selection enables no API kind
  // and no call.
  static bool TimesLeanCalls(const settings::Config& config);

  // The kinds the configuration names; with "api", the calls core::CollectedWhenLean keeps, by the
  // names CUPTI gives their callback ids.
  static ActivitySelection FromConfig(const settings::Config& config, CuptiApi& cupti);

  // Lean calls timed by callbacks (TimesLeanCalls): called with true once the kinds are on, with
  // false before they go off, so that a closed window costs the program's calls nothing. It says
  // itself what fails; the kinds stay on.
  void SetTimedCallSwitch(std::function<void(bool on)> timed_calls) { timed_calls_ = std::move(timed_calls); }

  // Enables the kinds, then each lean API's kind, then turns that API's other calls off. A failed
  // enable disables what was enabled and returns it; a call that cannot be turned off stays
  // recorded (more records, never fewer).
  absl::Status Enable(CuptiApi& cupti) const;
  void Disable(CuptiApi& cupti) const;

  // The kinds enabled whole, as the configuration names them.
  const std::vector<CUpti_ActivityKind>& kinds() const { return kinds_; }
  // The calls lean collection keeps, and the ones it turns off, of the APIs in lean_apis().
  const std::vector<ApiCallId>& calls() const { return calls_; }
  const std::vector<ApiCallId>& calls_off() const { return calls_off_; }
  const std::vector<v1::ApiDomain>& lean_apis() const { return lean_apis_; }
  // cuscope's own calls, whose records are turned off whatever the choice.
  const std::vector<ApiCallId>& own_calls() const { return own_calls_; }

 private:
  void AddLeanApi(v1::ApiDomain domain, CuptiApi& cupti);

  std::vector<CUpti_ActivityKind> kinds_;
  std::vector<v1::ApiDomain> lean_apis_;
  std::vector<ApiCallId> calls_;
  std::vector<ApiCallId> calls_off_;
  std::vector<ApiCallId> own_calls_;
  std::function<void(bool)> timed_calls_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_ACTIVITY_SELECTION_H_
