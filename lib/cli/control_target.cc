#include "lib/cli/control_target.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/control/socket_directory.h"

namespace cuscope::cli {

absl::StatusOr<ControlTarget> ResolveControlTarget(const std::string& pid_text, const std::string& command,
                                                   bool create) {
  if (pid_text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(command, ": --pid names the process (cuscope ps lists them)"));
  }
  int pid = 0;
  if (!absl::SimpleAtoi(pid_text, &pid) || pid <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(command, ": --pid takes a process id, not '", pid_text, "'"));
  }
  auto directory = control::ControlDirectory(create);
  if (!directory.ok()) {
    if (absl::IsNotFound(directory.status())) {
      return absl::NotFoundError(absl::StrCat(command, ": no process of this user has cuscope inside (",
                                              directory.status().message(), ")"));
    }
    return absl::FailedPreconditionError(absl::StrCat(command, ": ", directory.status().message()));
  }
  return ControlTarget{static_cast<pid_t>(pid), *directory};
}

}  // namespace cuscope::cli
