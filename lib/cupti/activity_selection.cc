#include "lib/cupti/activity_selection.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "lib/core/api_names.h"
#include "lib/cupti/activity_kinds.h"

namespace cuscope::cupti {
namespace {

void AddLeanCalls(v1::ApiDomain domain, CuptiApi& cupti, std::vector<ApiCallId>& calls) {
  for (uint32_t cbid : LeanCallIds(domain, cupti)) calls.push_back({domain, cbid});
}

}  // namespace

std::vector<uint32_t> LeanCallIds(v1::ApiDomain domain, CuptiApi& cupti) {
  const uint32_t count = domain == v1::API_DOMAIN_RUNTIME ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                                          : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
  std::vector<uint32_t> ids;
  for (uint32_t cbid = 1; cbid < count; ++cbid) {
    if (core::CollectedWhenLean(cupti.CallbackName(domain, cbid))) ids.push_back(cbid);
  }
  return ids;
}

ActivitySelection ActivitySelection::FromConfig(const core::Config& config, CuptiApi& cupti) {
  ActivitySelection s;
  for (const ActivityKindName& k : kActivityKinds) {
    if (config.kind_enabled(k.name)) s.kinds_.push_back(k.kind);
  }
  if (config.kind_enabled("api")) {
    if (!config.kind_enabled("runtime")) {
      AddLeanCalls(v1::API_DOMAIN_RUNTIME, cupti, s.calls_);
    }
    if (!config.kind_enabled("driver")) {
      AddLeanCalls(v1::API_DOMAIN_DRIVER, cupti, s.calls_);
    }
  }
  return s;
}

absl::Status ActivitySelection::Enable(CuptiApi& cupti) const {
  for (size_t i = 0; i < kinds_.size(); ++i) {
    if (auto st = cupti.EnableActivity(kinds_[i]); !st.ok()) {
      for (size_t j = 0; j < i; ++j) cupti.DisableActivity(kinds_[j]);
      return st;
    }
  }
  // After the kinds: enabling RUNTIME or DRIVER would undo a per-call choice made before it.
  for (size_t i = 0; i < calls_.size(); ++i) {
    if (auto st = cupti.EnableApiRecords(calls_[i].domain, calls_[i].cbid, true); !st.ok()) {
      for (size_t j = 0; j < i; ++j) (void)cupti.EnableApiRecords(calls_[j].domain, calls_[j].cbid, false);
      for (CUpti_ActivityKind k : kinds_) cupti.DisableActivity(k);
      return st;
    }
  }
  return absl::OkStatus();
}

void ActivitySelection::Disable(CuptiApi& cupti) const {
  for (CUpti_ActivityKind k : kinds_) cupti.DisableActivity(k);
  for (const ApiCallId& c : calls_) (void)cupti.EnableApiRecords(c.domain, c.cbid, false);
}

}  // namespace cuscope::cupti
