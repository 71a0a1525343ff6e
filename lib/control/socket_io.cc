#include "lib/control/socket_io.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/control/protocol.h"

namespace cuscope::control {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status WaitFor(int fd, short events, SteadyClock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
    if (left <= 0) return absl::DeadlineExceededError("nothing arrived in time");
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
  }
}

}  // namespace

absl::StatusOr<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("the socket path ", path, " is longer than a Unix socket allows"));
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

absl::Status SendAll(int fd, std::string_view bytes, std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!bytes.empty()) {
    if (auto st = WaitFor(fd, POLLOUT, deadline); !st.ok()) return st;
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(absl::StrCat("cannot send: ", std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReceiveFramed(int fd, size_t max_payload, std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  std::string bytes;
  char buffer[4096];
  for (;;) {
    auto size = FramedSize(bytes, max_payload);
    if (!size.ok()) return size.status();
    if (*size != 0) {
      bytes.resize(*size);  // what follows one message is not ours to read
      return bytes;
    }
    if (auto st = WaitFor(fd, POLLIN, deadline); !st.ok()) return st;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(absl::StrCat("cannot receive: ", std::strerror(errno)));
    }
    if (n == 0) return absl::DataLossError("the connection closed before the message was complete");
    bytes.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace cuscope::control
