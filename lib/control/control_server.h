// The listening side of the control socket: one thread that serves every connected peer at once
// from one poll loop, without blocking on any of them.
//
// Nothing listens on the network: the socket is a Unix domain socket in a directory only the user
// can enter (socket_directory.h), and each peer's credentials are checked as well: a process of
// another user (root excepted) gets an error reply and nothing else. A peer that sends nothing
// within kFirstBytesTimeout, or not a whole request within kRequestTimeout, gets an error reply
// and is dropped; a request that does not parse is answered with an error reply. Up to kMaxPeers
// are served at a time: silent peers cannot hold the socket for the others (a client asking
// meanwhile is answered at once), and the loop watches its wake pipe throughout, so stopping the
// server (the program's exit) never waits for a peer. The socket is removed when the server stops.
#ifndef CUSCOPE_LIB_CONTROL_CONTROL_SERVER_H_
#define CUSCOPE_LIB_CONTROL_CONTROL_SERVER_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "cuscope/v1/control.pb.h"

namespace cuscope::control {

class ControlServer {
 public:
  // Called on the server's thread, one request at a time. It must answer promptly: a client
  // waits for the reply (a capture replies once its file is created, not once it is written).
  using Handler = std::function<v1::ControlReply(const v1::ControlRequest&)>;

  // A client sends its request as soon as it is connected.
  static constexpr std::chrono::milliseconds kFirstBytesTimeout{500};
  static constexpr std::chrono::milliseconds kRequestTimeout{2000};
  // How long a reply may take to leave (a reply fits the socket's buffer: a peer must read it).
  static constexpr std::chrono::milliseconds kReplyTimeout{2000};
  static constexpr size_t kMaxPeers = 16;

  // Listens on SocketPath(directory, pid): the directory must be one PrepareDirectory accepts.
  // A socket already there is another's leftover (no live process has our id) and is replaced;
  // the sockets of processes that no longer exist are removed too. Fails without throwing.
  static absl::StatusOr<std::unique_ptr<ControlServer>> Start(const std::string& directory, pid_t pid,
                                                              Handler handler);
  ~ControlServer();  // stops the thread and removes the socket
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  const std::string& path() const { return path_; }
  uint64_t answered() const { return answered_.load(); }
  uint64_t refused() const { return refused_.load(); }  // foreign peers and unparsable requests

 private:
  struct Peer;
  ControlServer(std::string path, int listen_fd, int wake_read, int wake_write, Handler handler);
  void Loop();
  void AcceptPeers(std::vector<Peer>& peers);
  // Reads what `peer` sent; once its request is whole (or cannot be), prepares the reply.
  void Receive(Peer& peer);
  // Sends what is left of the reply; false when the peer is done with (sent, or gone).
  bool Send(Peer& peer);
  // The reply to the bytes received: the handler's, or a refusal.
  v1::ControlReply Answer(Peer& peer);
  void Reply(Peer& peer, const v1::ControlReply& reply);

  const std::string path_;
  const int listen_fd_;
  const int wake_read_;   // a byte written to wake_write_ ends Loop
  const int wake_write_;
  Handler handler_;
  std::thread thread_;
  std::atomic<uint64_t> answered_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace cuscope::control

#endif  // CUSCOPE_LIB_CONTROL_CONTROL_SERVER_H_
