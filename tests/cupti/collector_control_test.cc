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
#include "lib/settings/config.h"
#include "lib/core/trace.h"
#include "lib/cupti/activity_collector.h"
#include "lib/cupti/kernel_metrics_collector.h"
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
    ASSERT_FALSE(scratch_.path().empty());
    dir_ = scratch_.path();
    config_.output = dir_ + "/run.cuscope";
    config_.flush_period_ms = 60'000;  // no periodic flush: the test hands over every buffer
    config_.buffer_bytes = 64 * FakeCupti::kRecordSlot;
    auto control_dir = control::ControlDirectory(/*create=*/true);
    ASSERT_TRUE(control_dir.ok()) << control_dir.status();
    control_dir_ = *control_dir;
  }
  void TearDown() override {
    if (CollectorActive()) (void)StopCollector(nullptr);
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

  testing::ScratchDir scratch_{"cuscope_control_collector"};
  std::string dir_, control_dir_;
  settings::Config config_;
  FakeCupti cupti_;
};

TEST_F(CollectorControlTest, MonitorStatusShowsTheFiguresSoFar) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
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
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
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
  ASSERT_TRUE(cupti_.DeliverKernels(2, 225'000'000'000ull));
  core::Trace t2 = LoadWhenComplete(second);
  EXPECT_EQ(t2.kernels.size(), 2u);
  for (const auto& k : t2.kernels) EXPECT_FALSE(t2.dict.kernel_name(k.signature).empty());
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// `cuscope capture --top-down`: the window, then the one-run top-down on its hottest kernels, in
// the same file. No launch of the chosen kernel follows the window, so none is profiled: the file
// says which kernels were chosen and is written once the wait is over.
TEST_F(CollectorControlTest, AMonitorCaptureWithTopDownChoosesAmongItsWindowsKernels) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  // Lean calls by API records, so that the launch callbacks counted are the kernel metrics' alone.
  config_.lean_calls_by_records = true;
  config_.output = "";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const auto [domain, cbid] = KernelMetricsCollector::Callbacks().front();
  const std::string launch_callback = absl::StrCat(static_cast<int>(domain), ":", cbid);
  EXPECT_EQ(cupti_.Count("EnableCallback:" + launch_callback), 0u) << "always on: no launch callback";
  ASSERT_TRUE(cupti_.DeliverKernels(9, 500'000'000));  // before the window: not chosen from
  const std::string path = dir_ + "/top_down.cuscope";
  v1::ControlRequest r;
  v1::CaptureRequest* c = r.mutable_capture();
  c->set_kind(v1::CaptureRequest::KIND_WINDOW);
  c->set_path(path);
  c->set_seconds(0.3);
  c->set_top_down_kernels(2);
  c->set_top_down_launches(4);
  c->set_top_down_wait_seconds(1.0);  // long enough to hold records behind the phase (below)
  ::testing::internal::CaptureStderr();
  auto reply = Ask(r);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->error(), "");
  EXPECT_DOUBLE_EQ(reply->ready_in_seconds(), 1.3) << "the window, then at most the wait";
  cupti_.AdvanceClock(10'000'000'000ull);
  // The window's kernels sit in a buffer the program's later work keeps open: only a forced
  // flush hands them over.
  ASSERT_TRUE(cupti_.HoldKernelsUntilForcedFlush(5, 5'000'000'000ull));
  // The metrics phase: the launch callbacks go on after the window, and off again at its end.
  EXPECT_TRUE(Eventually([&] { return cupti_.Count("EnableCallback:" + launch_callback) == 1; }));
  // Records made meanwhile sit behind a replayed launch's record, which never completes: the end
  // of the metrics phase has them handed over, so the monitor's figures go on counting.
  ASSERT_TRUE(cupti_.HoldKernelsUntilForcedFlush(3, 12'000'000'000ull));
  core::Trace t = LoadWhenComplete(path);
  EXPECT_TRUE(Eventually([&] { return !Status().status().capture_busy(); }));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.kernels.size(), 5u);
  ASSERT_EQ(t.top_down.size(), 1u);
  ASSERT_EQ(t.top_down[0].kernels_size(), 1) << "one name and shape ran in the window";
  EXPECT_EQ(t.top_down[0].kernels(0).launches(), 5u) << "the 9 before the window are not counted";
  EXPECT_TRUE(t.metrics.empty());
  EXPECT_EQ(cupti_.Count("DisableCallback:" + launch_callback), 1u);
  EXPECT_THAT(err, HasSubstr("top-down: collecting sol,occupancy,stalls on the next 4 launches of"));
  EXPECT_THAT(err, HasSubstr("top-down: 0 of 4 launches of 1 hot kernels profiled"));
  cupti_.AdvanceClock(200'000'000'000ull);
  v1::ControlReply status;
  EXPECT_TRUE(Eventually([&] {
    status = Status();
    return status.status().devices_size() == 1 && status.status().devices(0).kernels() == 9u + 5 + 3;
  })) << status.DebugString();
  // A plain window afterwards turns nothing on.
  const std::string plain = dir_ + "/plain.cuscope";
  ASSERT_EQ(Capture(plain, 0.2, false).error(), "");
  cupti_.AdvanceClock(10'000'000'000ull);
  ASSERT_TRUE(cupti_.DeliverKernels(2, 225'000'000'000ull));
  core::Trace t2 = LoadWhenComplete(plain);
  EXPECT_EQ(t2.kernels.size(), 2u);
  EXPECT_TRUE(t2.top_down.empty());
  EXPECT_EQ(cupti_.Count("EnableCallback:" + launch_callback), 1u);
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// A window in which nothing ran chooses nothing and writes at once, without waiting.
TEST_F(CollectorControlTest, AMonitorTopDownCaptureOfAnIdleWindowSaysSo) {
  config_.mode = settings::CollectionMode::kMonitor;
  config_.overhead_budget = 0;  // recorded all the time: exact figures
  config_.output = "";
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  const std::string path = dir_ + "/idle.cuscope";
  v1::ControlRequest r;
  r.mutable_capture()->set_kind(v1::CaptureRequest::KIND_WINDOW);
  r.mutable_capture()->set_path(path);
  r.mutable_capture()->set_seconds(0.2);
  r.mutable_capture()->set_top_down_kernels(3);
  r.mutable_capture()->set_top_down_wait_seconds(600);  // never waited for: nothing to profile
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(Ask(r)->error(), "");
  core::Trace t = LoadWhenComplete(path);
  EXPECT_TRUE(Eventually([&] { return !Status().status().capture_busy(); }));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(t.top_down.size(), 1u);
  EXPECT_EQ(t.top_down[0].kernels_size(), 0);
  EXPECT_THAT(err, HasSubstr("top-down: no kernel ran in the window"));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

// Flight mode's recorder holds the past, and its top-down's metrics would come after it.
TEST_F(CollectorControlTest, ATopDownCaptureNeedsMonitorMode) {
  config_.mode = settings::CollectionMode::kFlight;
  config_.flight_span_ms = 5000;
  ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
  v1::ControlRequest r;
  r.mutable_capture()->set_kind(v1::CaptureRequest::KIND_WINDOW);
  r.mutable_capture()->set_path(dir_ + "/td.cuscope");
  r.mutable_capture()->set_seconds(1);
  r.mutable_capture()->set_top_down_kernels(1);
  EXPECT_THAT(Ask(r)->error(), HasSubstr("a top-down capture needs monitor mode"));
  EXPECT_FALSE(Exists(dir_ + "/td.cuscope"));
  ASSERT_TRUE(StopCollector(nullptr).ok());
}

TEST_F(CollectorControlTest, FlightModeCapturesTheRingOrTheNextSeconds) {
  config_.mode = settings::CollectionMode::kFlight;
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
