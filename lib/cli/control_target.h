// Which process `cuscope capture` and `status` address, and where its control socket is.
#ifndef CUSCOPE_LIB_CLI_CONTROL_TARGET_H_
#define CUSCOPE_LIB_CLI_CONTROL_TARGET_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace cuscope::cli {

struct ControlTarget {
  pid_t pid = 0;
  std::string directory;  // this user's control directory (lib/control/socket_directory.h)
};

// The target named by --pid's value; `command` starts the messages ("capture: --pid ...").
// `create`: make this user's control directory when it is missing (attach writes its settings there).
absl::StatusOr<ControlTarget> ResolveControlTarget(const std::string& pid_text, const std::string& command,
                                                   bool create = false);

// An output name (%p the target's id, %n, %h, %q{VAR}) as the target process must see it: expanded
// and absolute, since its working directory is not ours (capture, attach).
absl::StatusOr<std::string> TargetOutputPath(const std::string& pattern, pid_t pid);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_CONTROL_TARGET_H_
