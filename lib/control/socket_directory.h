// Where control sockets live: one directory per user that only that user can enter, one socket
// per process in it, named by the process id ("12345.sock").
//
// The directory is $XDG_RUNTIME_DIR/cuscope when XDG_RUNTIME_DIR names an absolute directory of
// the user's (the session's private run-time directory), else /tmp/cuscope-UID. It is created
// 0700; an existing one is used only if it is a real directory (not a link), owned by the user,
// that nobody else may enter, so another user can neither reach the sockets nor plant one.
#ifndef CUSCOPE_LIB_CONTROL_SOCKET_DIRECTORY_H_
#define CUSCOPE_LIB_CONTROL_SOCKET_DIRECTORY_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cuscope::control {

// The calling user's directory, made if missing when `create`; NotFound when it is missing and
// not to be made; FailedPrecondition (saying why) when it exists but is not safe to use.
absl::StatusOr<std::string> ControlDirectory(bool create);

// Checks, and with `create` makes, `directory` as ControlDirectory does (tests name their own).
absl::Status PrepareDirectory(const std::string& directory, bool create);

std::string SocketPath(const std::string& directory, pid_t pid);

// The process ids that have a socket in `directory`, in increasing order.
std::vector<pid_t> SocketPids(const std::string& directory);

// Whether a process with this id exists (one of another user's counts).
bool ProcessExists(pid_t pid);

// Removes the sockets of processes that no longer exist (a crashed process leaves its own).
// Returns how many were removed.
int RemoveStaleSockets(const std::string& directory);

}  // namespace cuscope::control

#endif  // CUSCOPE_LIB_CONTROL_SOCKET_DIRECTORY_H_
