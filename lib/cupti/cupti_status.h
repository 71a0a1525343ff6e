// CUPTI results as absl::Status, with CUPTI's own words for the error.
#ifndef CUSCOPE_LIB_CUPTI_CUPTI_STATUS_H_
#define CUSCOPE_LIB_CUPTI_CUPTI_STATUS_H_

#include <cupti.h>

#include <string>

#include "absl/status/status.h"

namespace cuscope::cupti {

// OK for CUPTI_SUCCESS; otherwise an error naming `what` (the call) and CUPTI's message. Errors
// that mean "another tool holds CUPTI" map to ResourceExhausted, missing driver/device support to
// Unavailable, so callers can word their one line for the user.
absl::Status CuptiStatus(CUptiResult result, const char* what);

// What to do when the GPU's performance counters are refused (ERR_NVGPUCTRPERM, PermissionDenied
// above), as a clause to append to the message. Kernel metrics and PM sampling say it alike.
inline constexpr char kCountersReservedHint[] =
    "; GPU performance counters are reserved for administrators on this machine "
    "(NVreg_RestrictProfilingToAdminUsers=1): run as root or ask for the driver setting to be lifted, see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM";

// `st`'s message, with kCountersReservedHint when the counters were refused.
std::string ExplainCounterError(const absl::Status& st);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CUPTI_STATUS_H_
