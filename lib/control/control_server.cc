#include "lib/control/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/control/protocol.h"
#include "lib/control/socket_directory.h"
#include "lib/control/socket_io.h"

namespace cuscope::control {

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Start(const std::string& directory, pid_t pid,
                                                                    Handler handler) {
  const std::string path = SocketPath(directory, pid);
  auto address = UnixAddress(path);
  if (!address.ok()) return address.status();
  RemoveStaleSockets(directory);
  ::unlink(path.c_str());  // no live process has our id: whatever is there was left by a dead one
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) return absl::UnavailableError(absl::StrCat("cannot make a socket: ", std::strerror(errno)));
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot bind ", path, ": ", std::strerror(errno)));
  }
  ::chmod(path.c_str(), 0600);
  if (::listen(listener.get(), 8) != 0) {
    ::unlink(path.c_str());
    return absl::UnavailableError(absl::StrCat("cannot listen on ", path, ": ", std::strerror(errno)));
  }
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) {
    ::unlink(path.c_str());
    return absl::UnavailableError(absl::StrCat("cannot make a pipe: ", std::strerror(errno)));
  }
  std::unique_ptr<ControlServer> server(new ControlServer(path, listener.release(), wake[0], wake[1], std::move(handler)));
  try {
    server->thread_ = std::thread(&ControlServer::Loop, server.get());
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot start the control thread: ", e.what()));
  }
  return server;
}

ControlServer::ControlServer(std::string path, int listen_fd, int wake_read, int wake_write, Handler handler)
    : path_(std::move(path)),
      listen_fd_(listen_fd),
      wake_read_(wake_read),
      wake_write_(wake_write),
      handler_(std::move(handler)) {}

ControlServer::~ControlServer() {
  if (thread_.joinable()) {
    const char byte = 1;
    (void)!::write(wake_write_, &byte, 1);
    thread_.join();
  }
  ::unlink(path_.c_str());
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
}

void ControlServer::Loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    UniqueFd peer(::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC));
    if (peer.get() >= 0) Serve(peer.get());
  }
}

void ControlServer::Serve(int fd) {
  // The request is read before anything is answered, even a refusal: a reply sent while the peer
  // is still writing would meet a closed socket there (EPIPE) and never be read.
  auto bytes = ReceiveFramed(fd, kMaxRequestBytes, kRequestTimeout);
  ucred peer{};
  socklen_t length = sizeof(peer);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
    refused_.fetch_add(1);
    return;
  }
  if (peer.uid != ::getuid() && peer.uid != 0) {
    refused_.fetch_add(1);
    (void)SendAll(fd, Frame(ErrorReply(absl::StrCat("refused: the process runs as user ", ::getuid(),
                                                     ", the request came from user ", peer.uid))),
                  kRequestTimeout);
    return;
  }
  if (!bytes.ok()) {
    refused_.fetch_add(1);
    (void)SendAll(fd, Frame(ErrorReply(absl::StrCat("refused: ", bytes.status().message()))), kRequestTimeout);
    return;
  }
  auto request = ParseRequest(*bytes);
  if (!request.ok()) {
    refused_.fetch_add(1);
    (void)SendAll(fd, Frame(ErrorReply(absl::StrCat("refused: ", request.status().message()))), kRequestTimeout);
    return;
  }
  v1::ControlReply reply = handler_(*request);
  reply.set_protocol_version(kProtocolVersion);
  answered_.fetch_add(1);
  (void)SendAll(fd, Frame(reply), kRequestTimeout);
}

}  // namespace cuscope::control
