// Blocking socket I/O with a deadline, for the control socket's one request and one reply.
#ifndef CUSCOPE_LIB_CONTROL_SOCKET_IO_H_
#define CUSCOPE_LIB_CONTROL_SOCKET_IO_H_

#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cuscope::control {

// Owns a file descriptor (-1: none) and closes it.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = other.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// The address of the Unix domain socket at `path`; InvalidArgument when the path is too long for
// one (108 bytes on Linux).
absl::StatusOr<sockaddr_un> UnixAddress(const std::string& path);

// Writes all of `bytes` (never raising SIGPIPE), or says why not within `timeout`.
absl::Status SendAll(int fd, std::string_view bytes, std::chrono::milliseconds timeout);

// Reads one framed message (protocol.h), at most `max_payload` bytes long, within `timeout`.
// DeadlineExceeded when it does not arrive in time, InvalidArgument when the prefix is bad or too
// large, DataLoss when the peer closes before the message is complete.
absl::StatusOr<std::string> ReceiveFramed(int fd, size_t max_payload, std::chrono::milliseconds timeout);

}  // namespace cuscope::control

#endif  // CUSCOPE_LIB_CONTROL_SOCKET_IO_H_
