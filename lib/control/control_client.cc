#include "lib/control/control_client.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
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
  // Nonblocking from the start: a stopped or stuck process whose socket queue is full would keep a
  // blocking connect() waiting for good. The whole exchange keeps to one deadline.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto left = [&deadline] {
    return std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      deadline - std::chrono::steady_clock::now()));
  };
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return absl::UnavailableError(absl::StrCat("cannot make a socket: ", std::strerror(errno)));
  for (;;) {
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) == 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("process ", pid, " has no control socket in ", directory,
                                              ": no cuscope inside, started by another user, or CUSCOPE_CONTROL=0"));
    }
    if (err == ECONNREFUSED) {
      ::unlink(path.c_str());
      return absl::NotFoundError(absl::StrCat("process ", pid, " does not answer: its socket was left by a process ",
                                              "that ended (removed)"));
    }
    if (err != EAGAIN) {
      return absl::UnavailableError(absl::StrCat("cannot reach process ", pid, " at ", path, ": ", std::strerror(err)));
    }
    // EAGAIN: the socket's queue of connections is full; the process is not accepting them.
    if (left().count() == 0) {
      return absl::DeadlineExceededError(absl::StrCat("process ", pid, " accepts no connection within ",
                                                      timeout.count() / 1000.0,
                                                      " s (its control socket's queue is full: stopped or stuck?)"));
    }
    ::usleep(10'000);
  }
  request.set_protocol_version(kProtocolVersion);
  const absl::Status sent = SendAll(fd.get(), Frame(request), left());
  // A refusal may come before the whole request went: read it either way.
  auto bytes = ReceiveFramed(fd.get(), kMaxReplyBytes, sent.ok() ? left() : std::chrono::milliseconds(1000));
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
