// cuscope::SessionOptions (the linked API) as a collector configuration: each option becomes the
// CUSCOPE_* setting of the same meaning and goes through ParseConfigFromEnvironment, so a program
// that links cuscope is accepted and refused exactly as the environment would be.
#ifndef CUSCOPE_LIB_INJECT_SESSION_CONFIG_H_
#define CUSCOPE_LIB_INJECT_SESSION_CONFIG_H_

#include "absl/status/statusor.h"
#include "cuscope/session.h"
#include "lib/settings/config.h"

namespace cuscope::inject {

// Options left at their defaults are not set, so the configuration's defaults apply; errors name
// the CUSCOPE_* setting an option maps to.
absl::StatusOr<settings::Config> ConfigFromSessionOptions(const SessionOptions& options);

}  // namespace cuscope::inject

#endif  // CUSCOPE_LIB_INJECT_SESSION_CONFIG_H_
