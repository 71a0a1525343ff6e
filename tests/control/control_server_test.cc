// The control socket between two ends of this process (and a child of another user): who may
// ask, what a bad request gets, and what is left on disk.
#include "lib/control/control_server.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/control/control_client.h"
#include "lib/control/protocol.h"
#include "lib/control/socket_directory.h"
#include "lib/control/socket_io.h"

namespace cuscope::control {
namespace {

using ::testing::HasSubstr;
using std::chrono::milliseconds;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// A pid no process has: a child that has been reaped.
pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// A socket file at `path` nobody listens on, as a crashed process leaves it.
void LeaveSocket(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  ::close(fd);
}

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cuscope_control_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;  // mkdtemp makes it 0700
  }
  void TearDown() override { std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  // A server that answers every status with its pid and counts what it was asked.
  std::unique_ptr<ControlServer> Serve() {
    auto server = ControlServer::Start(dir_, ::getpid(), [this](const v1::ControlRequest& r) {
      ++handled_;
      v1::ControlReply reply;
      if (r.has_capture()) {
        reply.set_path(r.capture().path());
      } else {
        reply.mutable_status()->set_pid(static_cast<uint32_t>(::getpid()));
      }
      return reply;
    });
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  v1::ControlRequest StatusRequest() {
    v1::ControlRequest r;
    r.mutable_status();
    return r;
  }

  // Connects to our own socket and sends `bytes` as they are; returns the reply's bytes.
  absl::StatusOr<std::string> SendRaw(const std::string& bytes, bool close_write = true) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, SocketPath(dir_, ::getpid()).c_str(), sizeof(address.sun_path) - 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      return absl::UnavailableError("connect");
    }
    if (auto st = SendAll(fd.get(), bytes, milliseconds(1000)); !st.ok()) return st;
    if (close_write) ::shutdown(fd.get(), SHUT_WR);
    return ReceiveFramed(fd.get(), kMaxReplyBytes, milliseconds(5000));
  }

  std::string dir_;
  std::atomic<int> handled_{0};
};

TEST_F(ControlServerTest, AnswersRequestsAndRemovesItsSocketWhenStopped) {
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->path(), SocketPath(dir_, ::getpid()));
  struct stat st;
  ASSERT_EQ(::stat(server->path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (int i = 0; i < 3; ++i) {
    auto reply = AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(5000));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->status().pid(), static_cast<uint32_t>(::getpid()));
    EXPECT_EQ(reply->protocol_version(), kProtocolVersion);
  }
  EXPECT_EQ(handled_.load(), 3);
  EXPECT_EQ(server->answered(), 3u);
  EXPECT_EQ(SocketPids(dir_), std::vector<pid_t>{::getpid()});
  server.reset();
  EXPECT_FALSE(Exists(SocketPath(dir_, ::getpid())));
  auto gone = AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(1000));
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(gone.status().message()), HasSubstr("no control socket"));
}

TEST_F(ControlServerTest, GarbageGetsAnErrorReplyAndTheServerGoesOn) {
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  // Not a message at all.
  auto reply = SendRaw(std::string("\x03\x0f\x0f\x0f", 4));
  ASSERT_TRUE(reply.ok()) << reply.status();
  auto parsed = ParseReply(*reply);
  ASSERT_TRUE(parsed.ok());
  EXPECT_THAT(parsed->error(), HasSubstr("refused: the request is not a ControlRequest"));
  // A prefix declaring 1 GiB: refused without reading it.
  reply = SendRaw(std::string("\x80\x80\x80\x80\x04", 5));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(ParseReply(*reply)->error(), HasSubstr("more than the 65536 allowed"));
  // A relative path: refused before the handler sees it.
  v1::ControlRequest capture;
  capture.set_protocol_version(1);
  capture.mutable_capture()->set_kind(v1::CaptureRequest::KIND_WINDOW);
  capture.mutable_capture()->set_path("here.cuscope");
  capture.mutable_capture()->set_seconds(1);
  reply = SendRaw(Frame(capture));
  ASSERT_TRUE(reply.ok());
  EXPECT_THAT(ParseReply(*reply)->error(), HasSubstr("absolute"));
  // A half message, then the peer closes.
  reply = SendRaw(Frame(capture).substr(0, 4));
  ASSERT_TRUE(reply.ok());
  EXPECT_THAT(ParseReply(*reply)->error(), HasSubstr("closed before"));
  EXPECT_EQ(handled_.load(), 0);
  EXPECT_EQ(server->refused(), 4u);
  // Still serving.
  auto ok = AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(5000));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->error().empty());
}

TEST_F(ControlServerTest, APeerThatSendsNothingIsDroppedAfterTheFirstBytesTimeout) {
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  const auto start = std::chrono::steady_clock::now();
  auto reply = SendRaw("", /*close_write=*/false);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(ParseReply(*reply)->error(), HasSubstr("nothing arrived in time"));
  EXPECT_GE(waited, ControlServer::kFirstBytesTimeout - milliseconds(50));
  EXPECT_LT(waited, ControlServer::kFirstBytesTimeout + milliseconds(1500));
  EXPECT_TRUE(AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(5000)).ok());
}

// A peer that starts a request and stalls has the whole request timeout, then a refusal.
TEST_F(ControlServerTest, APeerThatStallsMidRequestIsRefusedAfterTheRequestTimeout) {
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  const auto start = std::chrono::steady_clock::now();
  auto reply = SendRaw(Frame(StatusRequest()).substr(0, 1), /*close_write=*/false);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(ParseReply(*reply)->error(), HasSubstr("nothing arrived in time"));
  EXPECT_GE(waited, ControlServer::kRequestTimeout - milliseconds(100));
  EXPECT_LT(waited, ControlServer::kRequestTimeout + milliseconds(2000));
}

// A connection that sends nothing and stays open, as a stuck client or another user's program
// holding the socket would.
// With `wait`, connect() blocks until the connection is queued; without, it may fail (a full queue).
UniqueFd SilentPeer(const std::string& path, bool wait = true) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | (wait ? 0 : SOCK_NONBLOCK), 0));
  EXPECT_TRUE(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0 || !wait);
  return fd;
}

// The review: the server answered one peer at a time, 2 s each, so six silent peers made `status`
// time out. Now every peer is served at once: the request is answered while they wait.
TEST_F(ControlServerTest, SilentPeersDoNotDelayARequest) {
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 6; ++i) silent.push_back(SilentPeer(server->path()));
  ::usleep(50'000);  // accepted by now
  const auto start = std::chrono::steady_clock::now();
  auto reply = AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(5000));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_LT(waited, milliseconds(300)) << "answered behind the silent peers";
}

// More silent peers than the server serves at once: the request waits in the queue for the first
// of them to be dropped (kFirstBytesTimeout), not for all of them in turn.
TEST_F(ControlServerTest, MorePeersThanServedAtOnceCostOneFirstBytesTimeout) {
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  std::vector<UniqueFd> silent;
  for (size_t i = 0; i < ControlServer::kMaxPeers + 4; ++i) silent.push_back(SilentPeer(server->path()));
  const auto start = std::chrono::steady_clock::now();
  auto reply = AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(5000));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_GE(waited, ControlServer::kFirstBytesTimeout - milliseconds(100)) << "queued behind the first peers";
  EXPECT_LT(waited, ControlServer::kFirstBytesTimeout * 2 + milliseconds(500));
}

// The review: a silent peer delayed the program's exit by 1.8 s (the server read it before it
// looked at its wake pipe again). Stopping the server never waits for a peer.
TEST_F(ControlServerTest, StoppingTheServerDoesNotWaitForAPeer) {
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  UniqueFd silent = SilentPeer(server->path());
  UniqueFd stalled = SilentPeer(server->path());
  const std::string half = Frame(StatusRequest()).substr(0, 1);
  ASSERT_EQ(::send(stalled.get(), half.data(), half.size(), MSG_NOSIGNAL), 1);
  ::usleep(50'000);
  const auto start = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(100));
}

// A stopped or stuck process: its socket's queue of connections fills, and a blocking connect()
// then waits for good (`ps` hung). The client connects without blocking, within its deadline.
TEST_F(ControlServerTest, AFullConnectionQueueIsADeadlineNotAHang) {
  const std::string path = SocketPath(dir_, ::getpid());
  auto address = UnixAddress(path);
  ASSERT_TRUE(address.ok());
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM, 0));  // listens, never accepts: a stopped process
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  std::vector<UniqueFd> queued;
  for (int i = 0; i < 8; ++i) queued.push_back(SilentPeer(path, /*wait=*/false));  // more than the queue holds
  const auto start = std::chrono::steady_clock::now();
  auto reply = AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(500));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  EXPECT_THAT(std::string(reply.status().message()), HasSubstr("queue is full"));
  EXPECT_LT(waited, milliseconds(1500));
  EXPECT_GE(waited, milliseconds(450));
}

// The same process, but accepting and never answering (stopped after the connection): the reply's
// deadline, as before.
TEST_F(ControlServerTest, AProcessThatAcceptsButNeverAnswersIsADeadline) {
  const std::string path = SocketPath(dir_, ::getpid());
  auto address = UnixAddress(path);
  ASSERT_TRUE(address.ok());
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM, 0));
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)), 0);
  ASSERT_EQ(::listen(listener.get(), 8), 0);
  const auto start = std::chrono::steady_clock::now();
  auto reply = AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(500));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
}

TEST_F(ControlServerTest, LeftoverSocketsOfEndedProcessesAreRemoved) {
  const pid_t dead = DeadPid();
  LeaveSocket(SocketPath(dir_, dead));
  LeaveSocket(SocketPath(dir_, ::getpid()));  // our own id, left by a process that had it before
  ASSERT_TRUE(Exists(SocketPath(dir_, dead)));
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  EXPECT_FALSE(Exists(SocketPath(dir_, dead)));
  EXPECT_TRUE(AskProcess(dir_, ::getpid(), StatusRequest(), milliseconds(5000)).ok());

  // The client removes a leftover it finds on the way, and says the process is gone.
  LeaveSocket(SocketPath(dir_, dead));
  auto reply = AskProcess(dir_, dead, StatusRequest(), milliseconds(1000));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(Exists(SocketPath(dir_, dead)));
  LeaveSocket(SocketPath(dir_, dead));
  EXPECT_EQ(RemoveStaleSockets(dir_), 1);
  EXPECT_EQ(SocketPids(dir_), std::vector<pid_t>{::getpid()});
}

// The directory keeps other users out; the peer check is the second lock. To reach it, the test
// opens both (as a misconfigured system might) and asks as user nobody.
TEST_F(ControlServerTest, AnotherUsersRequestIsRefused) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root, to ask as another user";
  auto server = Serve();
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(server->path().c_str(), 0666), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t server_pid = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string answer = "setuid failed";
    if (::setgid(65534) == 0 && ::setuid(65534) == 0) {
      auto reply = AskProcess(dir_, server_pid, StatusRequest(), milliseconds(5000));
      answer = reply.ok() ? reply->error() : std::string(reply.status().message());
    }
    (void)!::write(pipe_fds[1], answer.data(), answer.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string answer;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0) answer.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  ::waitpid(child, nullptr, 0);
  EXPECT_THAT(answer, HasSubstr("refused: the process runs as user 0, the request came from user 65534"));
  EXPECT_EQ(handled_.load(), 0);
  EXPECT_EQ(server->refused(), 1u);
}

TEST(SocketDirectoryTest, ADirectoryOthersMayEnterOrThatIsALinkIsRefused) {
  char pattern[] = "/tmp/cuscope_dir_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string base = pattern;
  const std::string made = base + "/made";
  EXPECT_EQ(PrepareDirectory(made, false).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(PrepareDirectory(made, true).ok());
  struct stat st;
  ASSERT_EQ(::stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(PrepareDirectory(made, true).ok());  // again: already there, still fine
  ASSERT_EQ(::chmod(made.c_str(), 0755), 0);
  EXPECT_THAT(std::string(PrepareDirectory(made, true).message()), HasSubstr("must be 700"));
  const std::string link = base + "/link";
  ASSERT_EQ(::symlink(made.c_str(), link.c_str()), 0);
  EXPECT_THAT(std::string(PrepareDirectory(link, true).message()), HasSubstr("not a directory"));
  // Another user made it first (anyone can, in /tmp): refused, so the sockets go nowhere another
  // user controls. Making one as another user needs root.
  if (::getuid() == 0) {
    const std::string planted = base + "/planted";
    ASSERT_EQ(::mkdir(planted.c_str(), 0700), 0);
    ASSERT_EQ(::chown(planted.c_str(), 65534, 65534), 0);
    EXPECT_THAT(std::string(PrepareDirectory(planted, true).message()), HasSubstr("belongs to user 65534"));
  }
  std::system(absl::StrCat("rm -rf '", base, "'").c_str());
}

}  // namespace
}  // namespace cuscope::control
