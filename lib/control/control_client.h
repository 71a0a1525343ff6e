// The asking side of the control socket: `cuscope capture`, `status` and `ps`.
#ifndef CUSCOPE_LIB_CONTROL_CONTROL_CLIENT_H_
#define CUSCOPE_LIB_CONTROL_CONTROL_CLIENT_H_

#include <sys/types.h>

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "cuscope/v1/control.pb.h"

namespace cuscope::control {

// Sends `request` (its protocol_version set here) to process `pid` through its socket in
// `directory` and returns the reply, which may itself carry an error. NotFound when the process
// does not exist or has no socket there (a leftover socket of a process that is gone is removed
// on the way); DeadlineExceeded when no reply comes within `timeout`, which covers the whole exchange
// (the connection too: a process whose socket queue is full does not block the caller).
absl::StatusOr<v1::ControlReply> AskProcess(const std::string& directory, pid_t pid, v1::ControlRequest request,
                                            std::chrono::milliseconds timeout);

}  // namespace cuscope::control

#endif  // CUSCOPE_LIB_CONTROL_CONTROL_CLIENT_H_
