#include "lib/control/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
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
  // Nonblocking: the loop accepts until none is left.
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
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

using SteadyClock = std::chrono::steady_clock;

struct ControlServer::Peer {
  explicit Peer(int descriptor) : fd(descriptor), deadline(SteadyClock::now() + kFirstBytesTimeout) {}
  UniqueFd fd;
  std::string received;
  std::string reply;   // framed, once the request is answered
  size_t sent = 0;     // bytes of `reply` sent
  bool replying = false;
  bool closed = false;  // the peer closed its side before its request was whole
  SteadyClock::time_point deadline;
};

void ControlServer::Loop() {
  std::vector<Peer> peers;
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    // At kMaxPeers the listener waits: a new connection stays in the socket's queue until a peer is
    // done (at the latest kRequestTimeout + kReplyTimeout later).
    fds.push_back({listen_fd_, static_cast<short>(peers.size() < kMaxPeers ? POLLIN : 0), 0});
    auto next = SteadyClock::time_point::max();
    for (const Peer& p : peers) {
      fds.push_back({p.fd.get(), static_cast<short>(p.replying ? POLLOUT : POLLIN), 0});
      next = std::min(next, p.deadline);
    }
    int timeout_ms = -1;
    if (next != SteadyClock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - SteadyClock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left + 1, 0, 60'000));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;  // stopping: no peer delays it
    // Serve the peers polled (new ones are appended after them), then drop those done or late.
    const size_t polled = peers.size();
    for (size_t i = 0; i < polled; ++i) {
      Peer& p = peers[i];
      const short events = fds[i + 2].revents;
      if (events == 0) continue;
      if (!p.replying) {
        Receive(p);
      } else if (!Send(p)) {
        p.closed = true;
      }
    }
    const auto now = SteadyClock::now();
    for (Peer& p : peers) {
      if (p.closed || now < p.deadline) continue;
      if (p.replying) {
        p.closed = true;  // it does not read its reply
      } else {
        refused_.fetch_add(1);
        Reply(p, ErrorReply("refused: nothing arrived in time"));
        if (!Send(p)) p.closed = true;
      }
    }
    peers.erase(std::remove_if(peers.begin(), peers.end(), [](const Peer& p) { return p.closed; }), peers.end());
    if ((fds[1].revents & POLLIN) != 0) AcceptPeers(peers);
  }
}

void ControlServer::AcceptPeers(std::vector<Peer>& peers) {
  while (peers.size() < kMaxPeers) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: none left (or the peer gave up meanwhile)
    peers.emplace_back(fd);
  }
}

void ControlServer::Receive(Peer& peer) {
  char buffer[4096];
  bool ended = false;  // the peer stopped writing (it may still read a reply)
  while (peer.received.size() <= kMaxRequestBytes + 16) {  // past that, FramedSize refuses it below
    const ssize_t n = ::recv(peer.fd.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      peer.closed = true;
      return;
    }
    if (n == 0) {
      ended = true;
      break;
    }
    if (peer.received.empty()) peer.deadline = SteadyClock::now() + kRequestTimeout;
    peer.received.append(buffer, static_cast<size_t>(n));
  }
  absl::StatusOr<size_t> size = FramedSize(peer.received, kMaxRequestBytes);
  if (size.ok() && *size == 0 && !ended) return;  // more to come
  v1::ControlReply reply;
  if (!size.ok()) {
    refused_.fetch_add(1);
    reply = ErrorReply(absl::StrCat("refused: ", size.status().message()));
  } else if (*size == 0) {
    refused_.fetch_add(1);
    reply = ErrorReply(peer.received.empty() ? "refused: nothing arrived"
                                             : "refused: the connection closed before the message was complete");
  } else {
    peer.received.resize(*size);  // what follows one message is not ours to read
    reply = Answer(peer);
  }
  Reply(peer, reply);
  if (!Send(peer)) peer.closed = true;
}

v1::ControlReply ControlServer::Answer(Peer& peer) {
  // The request is read before anything is answered, even a refusal: a reply sent while the peer
  // is still writing would meet a closed socket there (EPIPE) and never be read.
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (::getsockopt(peer.fd.get(), SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    refused_.fetch_add(1);
    return ErrorReply("refused: the asking process is unknown");
  }
  if (credentials.uid != ::getuid() && credentials.uid != 0) {
    refused_.fetch_add(1);
    return ErrorReply(absl::StrCat("refused: the process runs as user ", ::getuid(), ", the request came from user ",
                                   credentials.uid));
  }
  absl::StatusOr<v1::ControlRequest> request = ParseRequest(peer.received);
  if (!request.ok()) {
    refused_.fetch_add(1);
    return ErrorReply(absl::StrCat("refused: ", request.status().message()));
  }
  v1::ControlReply reply = handler_(*request);
  answered_.fetch_add(1);
  return reply;
}

void ControlServer::Reply(Peer& peer, const v1::ControlReply& reply) {
  v1::ControlReply versioned = reply;
  versioned.set_protocol_version(kProtocolVersion);
  peer.reply = Frame(versioned);
  peer.sent = 0;
  peer.replying = true;
  peer.deadline = SteadyClock::now() + kReplyTimeout;
}

bool ControlServer::Send(Peer& peer) {
  while (peer.sent < peer.reply.size()) {
    const ssize_t n = ::send(peer.fd.get(), peer.reply.data() + peer.sent, peer.reply.size() - peer.sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;  // the rest when the peer has read some
    }
    peer.sent += static_cast<size_t>(n);
  }
  return false;  // all sent: done with this peer
}

}  // namespace cuscope::control
