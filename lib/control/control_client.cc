#include "lib/control/control_client.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/control/protocol.h"
#include "lib/control/socket_directory.h"
#include "lib/control/socket_io.h"

namespace cuscope::control {

absl::StatusOr<v1::ControlReply> AskProcess(const std::string& directory, pid_t pid, v1::ControlRequest request,
                                            std::chrono::milliseconds timeout) {
  const std::string path = SocketPath(directory, pid);
  auto address = UnixAddress(path);
  if (!address.ok()) return address.status();
  if (!ProcessExists(pid)) {
    ::unlink(path.c_str());
    return absl::NotFoundError(absl::StrCat("no process ", pid));
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return absl::UnavailableError(absl::StrCat("cannot make a socket: ", std::strerror(errno)));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat("process ", pid, " has no control socket in ", directory,
                                              ": no cuscope inside, started by another user, or CUSCOPE_CONTROL=0"));
    }
    if (errno == ECONNREFUSED) {
      ::unlink(path.c_str());
      return absl::NotFoundError(absl::StrCat("process ", pid, " does not answer: its socket was left by a process ",
                                              "that ended (removed)"));
    }
    return absl::UnavailableError(absl::StrCat("cannot reach process ", pid, " at ", path, ": ", std::strerror(errno)));
  }
  request.set_protocol_version(kProtocolVersion);
  const absl::Status sent = SendAll(fd.get(), Frame(request), timeout);
  // A refusal may come before the whole request went: read it either way.
  auto bytes = ReceiveFramed(fd.get(), kMaxReplyBytes, sent.ok() ? timeout : std::chrono::milliseconds(1000));
  if (!sent.ok() && !bytes.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot ask process ", pid, ": ", sent.message()));
  }
  if (!bytes.ok()) {
    if (absl::IsDeadlineExceeded(bytes.status())) {
      return absl::DeadlineExceededError(absl::StrCat("process ", pid, " did not answer within ",
                                                      timeout.count() / 1000.0, " s"));
    }
    return absl::UnavailableError(absl::StrCat("no reply from process ", pid, ": ", bytes.status().message()));
  }
  return ParseReply(*bytes);
}

}  // namespace cuscope::control
