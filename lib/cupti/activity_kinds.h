// The CUPTI activity kinds by the names users give them (settings::kActivityKindNames; "api" is not a
// kind but a choice of calls, activity_selection.h). Header-only, so that the bare CUPTI collector
// of bench/gpu measures exactly the kinds cuscope enables without linking the collector.
#ifndef CUSCOPE_LIB_CUPTI_ACTIVITY_KINDS_H_
#define CUSCOPE_LIB_CUPTI_ACTIVITY_KINDS_H_

#include <cupti_activity.h>

namespace cuscope::cupti {

struct ActivityKindName {
  const char* name;
  CUpti_ActivityKind kind;
};

inline constexpr ActivityKindName kActivityKinds[] = {
    {"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}, {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
    {"memset", CUPTI_ACTIVITY_KIND_MEMSET},            {"runtime", CUPTI_ACTIVITY_KIND_RUNTIME},
    {"driver", CUPTI_ACTIVITY_KIND_DRIVER},            {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
    {"nvtx", CUPTI_ACTIVITY_KIND_MARKER},              {"memory", CUPTI_ACTIVITY_KIND_MEMORY2},
    {"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD},
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_ACTIVITY_KINDS_H_
