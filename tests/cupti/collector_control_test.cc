// The collector behind its control socket, with CUPTI and the driver faked: what `cuscope status`
// and `cuscope capture` get from a process in each mode, asked through the real socket.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/control/control_client.h"
#include "lib/control/socket_directory.h"
#include "lib/core/config.h"
#include "lib/core/trace.h"
#include "lib/cupti/activity_collector.h"
#include "tests/cupti/collector_test_support.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace {

using ::testing::HasSubstr;
using testing::Eventually;
using testing::FakeCupti;
using testing::LoadWhenComplete;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}


class CollectorControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cuscope_control_collector_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    config_.output = dir_ + "/run.cuscope";
    config_.flush_period_ms = 60'000;  // no periodic flush: the test hands over every buffer
    config_.buffer_bytes = 64 * FakeCupti::kRecordSlot;
    auto control_dir = control::ControlDirectory(/*create=*/true);
    ASSERT_TRUE(control_dir.ok()) << control_dir.status();
    control_dir_ = *control_dir;
  }
  void TearDown() override {
    if (CollectorActive()) (void)StopCollector(nullptr);
    std::system(absl::StrCat("rm -rf '", dir_, "'").c_str());
  }

  absl::StatusOr<v1::ControlReply> Ask(v1::ControlRequest request) {
    return control::AskProcess(control_dir_, ::getpid(), std::move(request), std::chrono::milliseconds(5000));
  }
  v1::ControlReply Status() {
    v1::ControlRequest r;
    r.mutable_status();
    auto reply = Ask(r);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *reply : v1::ControlReply();
  }
  v1::ControlReply Capture(const std::string& path, double seconds, bool snapshot) {
    v1::ControlRequest r;
    r.mutable_capture()->set_kind(snapshot ? v1::CaptureRequest::KIND_SNAPSHOT : v1::CaptureRequest::KIND_WINDOW);
    r.mutable_capture()->set_path(path);
    r.mutable_capture()->set_seconds(seconds);
    auto reply = Ask(r);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *reply : v1::ControlReply();
  }

  std::string dir_, control_dir_;
  core::Config config_;
  FakeCupti cupti_;
};

TEST_F(CollectorControlTest, MonitorStatusShowsTheFiguresSoFar) {
  config_.mode = core::CollectionMode::kMonitor;
  config_.monitor_interval_ms = 100;
  config_.output = "";
  ASSERT_TRUE(StartCollector(config_, "injection", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(7, 1'050'000'000));
  // Intervals close once the clock is past them by two flush periods (records arrive that late).
  cupti_.AdvanceClock(200'000'000'000ull);
  v1::ControlReply reply;
  ASSERT_TRUE(Eventually([&] {
    reply = Status();
    return reply.status().devices_size() == 1 && reply.status().devices(0).kernels() == 7;
  })) << reply.DebugString();
  const v1::ProcessStatus& s = reply.status();
  EXPECT_EQ(s.pid(), static_cast<uint32_t>(::getpid()));
  EXPECT_EQ(s.mode(), "monitor");
  EXPECT_EQ(s.entry(), "injection");
  EXPECT_THAT(s.command_line(), HasSubstr("collector_control_test"));
  EXPECT_GT(s.intervals(), 0u);
  EXPECT_EQ(s.devices(0).busy_ns(), 7u * 1000);  // each fake kernel runs 1 us
  ASSERT_GE(s.top_kernels_size(), 1);
  EXPECT_EQ(s.top_kernels(0).launches(), 7u);
  EXPECT_FALSE(s.capture_busy());
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_FALSE(Exists(control::SocketPath(control_dir_, ::getpid())));  // the stop removes the socket
}

TEST_F(CollectorControlTest, AMonitorCaptureHoldsTheWindowsRecordsInAFileOfItsOwn) {
  config_.mode = core::CollectionMode::kMonitor;
  config_.output = "";  // no session file: the capture is the only one
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(3, 500'000'000));  // before the window
  const std::string path = dir_ + "/window.cuscope";
  v1::ControlReply reply = Capture(path, 0.5, /*snapshot=*/false);
  ASSERT_EQ(reply.error(), "");
  EXPECT_EQ(reply.path(), path);
  EXPECT_TRUE(Exists(path));  // created at once
  EXPECT_TRUE(Status().status().capture_busy());
  // Another capture meanwhile is refused with one sentence.
  v1::ControlReply refused = Capture(dir_ + "/other.cuscope", 1, false);
  EXPECT_THAT(refused.error(), HasSubstr("a capture is being written; this capture is refused"));
  EXPECT_FALSE(Exists(dir_ + "/other.cuscope"));
  cupti_.AdvanceClock(10'000'000'000ull);
  ASSERT_TRUE(cupti_.DeliverKernels(5, 5'000'000'000));  // inside the window
  core::Trace t = LoadWhenComplete(path);
  EXPECT_EQ(t.kernels.size(), 5u);
  for (const auto& k : t.kernels) EXPECT_FALSE(t.dict.kernel_name(k.signature).empty());
  ASSERT_FALSE(t.windows.empty());
  EXPECT_EQ(t.windows[0].reason(), "capture");
  EXPECT_TRUE(Eventually([&] { return !Status().status().capture_busy(); }));
  // The next capture starts from nothing, and still resolves every name.
  const std::string second = dir_ + "/second.cuscope";
  ASSERT_EQ(Capture(second, 0.3, false).error(), "");
  cupti_.AdvanceClock(10'000'000'000ull);
  ASSERT_TRUE(cupti_.DeliverKernels(2, 25'000'000'000ull));
  core::Trace t2 = LoadWhenComplete(second);
  EXPECT_EQ(t2.kernels.size(), 2u);
  for (const auto& k : t2.kernels) EXPECT_FALSE(t2.dict.kernel_name(k.signature).empty());
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorControlTest, FlightModeCapturesTheRingOrTheNextSeconds) {
  config_.mode = core::CollectionMode::kFlight;
  config_.flight_span_ms = 5000;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  ASSERT_TRUE(cupti_.DeliverKernels(4, 2'000'000'000));
  ASSERT_TRUE(Eventually([&] { return Status().status().flight_chunks() > 0; }));
  const std::string ring = dir_ + "/ring.cuscope";
  ASSERT_EQ(Capture(ring, 0, /*snapshot=*/true).error(), "");
  EXPECT_EQ(LoadWhenComplete(ring).kernels.size(), 4u);
  ASSERT_TRUE(Eventually([&] { return !Status().status().capture_busy(); }));
  // A window: what comes after the request only.
  const std::string next = dir_ + "/next.cuscope";
  cupti_.AdvanceClock(1'000'000'000ull);
  ASSERT_EQ(Capture(next, 0.4, /*snapshot=*/false).error(), "");
  cupti_.AdvanceClock(1'000'000'000ull);
  ASSERT_TRUE(cupti_.DeliverKernels(3, 4'000'000'000ull));
  EXPECT_EQ(LoadWhenComplete(next).kernels.size(), 3u);
  ASSERT_TRUE(Eventually([&] { return !Status().status().capture_busy(); }));
  // Longer than the ring reaches: refused, with the setting named.
  EXPECT_THAT(Capture(dir_ + "/long.cuscope", 6, false).error(), HasSubstr("CUSCOPE_FLIGHT_SPAN"));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorControlTest, TraceModeRefusesCapturesAndAnswersStatus) {
  ASSERT_TRUE(StartCollector(config_, "preload", cupti_).ok());
  v1::ControlReply status = Status();
  EXPECT_EQ(status.status().mode(), "trace");
  EXPECT_EQ(status.status().output_path(), config_.output);
  EXPECT_THAT(Capture(dir_ + "/w.cuscope", 1, false).error(), HasSubstr("trace mode"));
  EXPECT_THAT(Capture(dir_ + "/s.cuscope", 0, true).error(), HasSubstr("needs flight mode"));
  EXPECT_FALSE(Exists(dir_ + "/w.cuscope"));
  EXPECT_FALSE(Exists(dir_ + "/s.cuscope"));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorControlTest, NoSocketWithControlOff) {
  config_.control = false;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  EXPECT_FALSE(Exists(control::SocketPath(control_dir_, ::getpid())));
  v1::ControlRequest r;
  r.mutable_status();
  EXPECT_EQ(Ask(r).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

}  // namespace
}  // namespace cuscope::cupti
