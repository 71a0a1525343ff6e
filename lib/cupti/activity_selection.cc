#include "lib/cupti/activity_selection.h"

#include <algorithm>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "lib/core/api_names.h"
#include "lib/cupti/activity_kinds.h"

namespace cuscope::cupti {
namespace {

uint32_t CallIdCount(v1::ApiDomain domain) {
  return domain == v1::API_DOMAIN_RUNTIME ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                          : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
}

CUpti_ActivityKind ApiKind(v1::ApiDomain domain) {
  return domain == v1::API_DOMAIN_RUNTIME ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
}

}  // namespace

std::vector<uint32_t> LeanCallIds(v1::ApiDomain domain, CuptiApi& cupti) {
  std::vector<uint32_t> ids;
  for (uint32_t cbid = 1; cbid < CallIdCount(domain); ++cbid) {
    if (core::CollectedWhenLean(cupti.CallbackName(domain, cbid))) ids.push_back(cbid);
  }
  return ids;
}

void ActivitySelection::AddLeanApi(v1::ApiDomain domain, CuptiApi& cupti) {
  lean_apis_.push_back(domain);
  for (uint32_t cbid = 1; cbid < CallIdCount(domain); ++cbid) {
    (core::CollectedWhenLean(cupti.CallbackName(domain, cbid)) ? calls_ : calls_off_).push_back({domain, cbid});
  }
}

bool ActivitySelection::TimesLeanCalls(const settings::Config& config) {
  return config.kind_enabled("api") && !config.kind_enabled("runtime") && !config.kind_enabled("driver") &&
         !config.lean_calls_by_records;
}

ActivitySelection ActivitySelection::FromConfig(const settings::Config& config, CuptiApi& cupti) {
  ActivitySelection s;
  for (const ActivityKindName& k : kActivityKinds) {
    if (config.kind_enabled(k.name)) s.kinds_.push_back(k.kind);
  }
  // NVTX payloads (nvtxRangePushEx and friends; NCCL's collectives carry communicator and bytes)
  // come in marker data records beside the markers.
  if (config.kind_enabled("nvtx")) s.kinds_.push_back(CUPTI_ACTIVITY_KIND_MARKER_DATA);
  const bool lean_records = config.kind_enabled("api") && !TimesLeanCalls(config);
  if (lean_records) {
    // The synchronization records the callbacks would have written come from CUPTI's kind then.
    if (!config.kind_enabled("sync")) s.kinds_.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    if (!config.kind_enabled("runtime")) s.AddLeanApi(v1::API_DOMAIN_RUNTIME, cupti);
    if (!config.kind_enabled("driver")) s.AddLeanApi(v1::API_DOMAIN_DRIVER, cupti);
  }
  if (!config.metrics.empty() && (lean_records || config.kind_enabled("driver"))) {
    // Only those the lean choice does not turn off already (one CUPTI call each, per window).
    for (uint32_t cbid : {CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing, CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing_ptsz}) {
      const ApiCallId own{v1::API_DOMAIN_DRIVER, cbid};
      const bool off_already = std::any_of(s.calls_off_.begin(), s.calls_off_.end(), [&own](const ApiCallId& c) {
        return c.domain == own.domain && c.cbid == own.cbid;
      });
      if (!off_already) s.own_calls_.push_back(own);
    }
  }
  return s;
}

absl::Status ActivitySelection::Enable(CuptiApi& cupti) const {
  std::vector<CUpti_ActivityKind> enabled;
  const auto undo = [&] {
    for (CUpti_ActivityKind k : enabled) cupti.DisableActivity(k);
  };
  for (CUpti_ActivityKind k : kinds_) {
    if (auto st = cupti.EnableActivity(k); !st.ok()) {
      undo();
      return st;
    }
    enabled.push_back(k);
  }
  for (v1::ApiDomain api : lean_apis_) {
    if (auto st = cupti.EnableActivity(ApiKind(api)); !st.ok()) {
      undo();
      return st;
    }
    enabled.push_back(ApiKind(api));
  }
  // After the kinds: enabling RUNTIME or DRIVER undoes a per-call choice made before it.
  for (const ApiCallId& c : calls_off_) (void)cupti.EnableApiRecords(c.domain, c.cbid, false);
  for (const ApiCallId& c : own_calls_) (void)cupti.EnableApiRecords(c.domain, c.cbid, false);
  if (timed_calls_) timed_calls_(true);
  return absl::OkStatus();
}

void ActivitySelection::Disable(CuptiApi& cupti) const {
  if (timed_calls_) timed_calls_(false);
  for (CUpti_ActivityKind k : kinds_) cupti.DisableActivity(k);  // one not enabled: CUPTI ignores it
  for (v1::ApiDomain api : lean_apis_) cupti.DisableActivity(ApiKind(api));
}

}  // namespace cuscope::cupti
