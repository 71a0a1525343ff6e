// What CUPTI is asked to record: activity kinds, and under lean collection (the kind "api") the
// runtime and driver calls chosen one by one (cuptiActivityEnableRuntimeApi/DriverApi).
//
// CUPTI's per-call choice is process-wide and is overridden by enabling the RUNTIME or DRIVER kind
// afterwards, so the calls are chosen only for an API whose kind is not enabled as a whole
// ("runtime" and "driver" keep meaning every call). The runtime makes its own driver calls inside
// a runtime call without driver records; the driver calls it makes outside one (its lazy start-up
// queries, module loads) are driver records, and the lean choice keeps only module loads of them.
#ifndef CUSCOPE_LIB_CUPTI_ACTIVITY_SELECTION_H_
#define CUSCOPE_LIB_CUPTI_ACTIVITY_SELECTION_H_

#include <cstdint>
#include <vector>

#include <cupti.h>

#include "absl/status/status.h"
#include "lib/core/config.h"
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
  // The kinds the configuration names; with "api", the calls core::CollectedWhenLean keeps, by the
  // names CUPTI gives their callback ids.
  static ActivitySelection FromConfig(const core::Config& config, CuptiApi& cupti);

  // Enables the kinds, then the chosen calls. A failure disables what was enabled and returns it.
  absl::Status Enable(CuptiApi& cupti) const;
  void Disable(CuptiApi& cupti) const;

  const std::vector<CUpti_ActivityKind>& kinds() const { return kinds_; }
  const std::vector<ApiCallId>& calls() const { return calls_; }

 private:
  std::vector<CUpti_ActivityKind> kinds_;
  std::vector<ApiCallId> calls_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_ACTIVITY_SELECTION_H_
