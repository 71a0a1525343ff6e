#include "lib/cli/control_target.h"

#include <unistd.h>

#include <climits>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/control/socket_directory.h"
#include "lib/core/output_name.h"

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

absl::StatusOr<std::string> TargetOutputPath(const std::string& pattern, pid_t pid) {
  core::OutputNameContext context = core::CurrentProcessOutputContext();
  context.pid = static_cast<uint32_t>(pid);
  auto expanded = core::ExpandOutputName(pattern, context);
  if (!expanded.ok()) return expanded.status();
  if (!expanded->empty() && (*expanded)[0] == '/') return *expanded;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return absl::FailedPreconditionError("cannot tell this directory");
  return absl::StrCat(cwd, "/", *expanded);
}

}  // namespace cuscope::cli
