// CUPTI results as absl::Status, with CUPTI's own words for the error.
#ifndef CUSCOPE_LIB_CUPTI_CUPTI_STATUS_H_
#define CUSCOPE_LIB_CUPTI_CUPTI_STATUS_H_

#include <cupti.h>

#include "absl/status/status.h"

namespace cuscope::cupti {

// OK for CUPTI_SUCCESS; otherwise an error naming `what` (the call) and CUPTI's message. Errors
// that mean "another tool holds CUPTI" map to ResourceExhausted, missing driver/device support to
// Unavailable, so callers can word their one line for the user.
absl::Status CuptiStatus(CUptiResult result, const char* what);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CUPTI_STATUS_H_
