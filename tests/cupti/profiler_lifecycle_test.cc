// The profilers' lifecycle on a machine without a GPU: PM sampling (the GPU counters over time) and
// the Range Profiler (kernel metrics) reach CUPTI through the fake's profiling API. What a failed
// start leaves behind, and a monitor-mode capture's top-down: the counters paused, the hot kernel's
// launch profiled, the counters resumed.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <cupti.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/core/trace.h"
#include "lib/cupti/activity_collector.h"
#include "lib/cupti/gpu_counter_sampler.h"
#include "lib/cupti/kernel_metrics_collector.h"
#include "lib/settings/config.h"
#include "tests/cupti/collector_test_support.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace {

using ::testing::HasSubstr;
using testing::Eventually;
using testing::FakeCupti;
using testing::LoadWhenComplete;

// ---- GPU counters over time: a start that fails part way ------------------------------------

class GpuCounterStartTest : public ::testing::Test {
 protected:
  // PM sampling alone (no NVML) on `devices` devices.
  std::unique_ptr<GpuCounterSampler> Sampler(FakeCupti& cupti, uint32_t devices) {
    GpuCounterSamplerOptions options;
    for (uint32_t d = 0; d < devices; ++d) options.devices.push_back(d);
    options.nvml = false;
    return std::make_unique<GpuCounterSampler>(
        cupti, options, [](std::vector<CounterBatch>) {}, [this](const std::string& line) { warnings_.push_back(line); });
  }

  std::vector<std::string> warnings_;
};

// Each step of PM sampling's set-up and start, in the order they run. A failure at any of them
// fails the start (PM sampling is the only source here) and leaves nothing of the profilers
// enabled, started or allocated; the sampling object is disabled only when it was enabled, after
// the step that failed.
TEST_F(GpuCounterStartTest, AStartFailingAtAnyStepLeavesNothingEnabled) {
  const std::vector<std::string> steps = {
      "ProfilerInitialize",          "ChipName",
      "PmSamplingGetCounterAvailability", "ProfilerHostInitialize",
      "ProfilerHostGetConfigImage",  "PmSamplingEnable",
      "PmSamplingSetConfig",         "PmSamplingGetCounterDataSize",
      "PmSamplingCounterDataImageInitialize", "PmSamplingStart"};
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string& step = steps[i];
    SCOPED_TRACE(step);
    FakeCupti cupti;
    cupti.Fail(step);
    auto sampler = Sampler(cupti, 1);
    const absl::Status started = sampler->Start();
    EXPECT_FALSE(started.ok());
    EXPECT_THAT(std::string(started.message()), HasSubstr("device 0"));
    ASSERT_NE(cupti.FirstIndexOf(step), -1) << "the step ran";
    EXPECT_EQ(cupti.PmSamplersEnabled(), 0u);
    EXPECT_EQ(cupti.PmSamplersStarted(), 0u);
    EXPECT_EQ(cupti.ProfilerHostsAlive(), 0u);
    const bool enabled = i > 5;  // past PmSamplingEnable
    if (enabled) {
      EXPECT_EQ(cupti.Count("PmSamplingDisable"), 1u);
      EXPECT_GT(cupti.FirstIndexOf("PmSamplingDisable"), cupti.FirstIndexOf(step)) << "undone after it failed";
    } else {
      EXPECT_EQ(cupti.Count("PmSamplingDisable"), 0u) << "nothing was enabled to undo";
    }
    EXPECT_EQ(cupti.Count("PmSamplingStop"), 0u) << "sampling never started";
    // The stop that follows a failed start has nothing left to release.
    const size_t calls = cupti.Calls().size();
    sampler->Stop();
    EXPECT_EQ(cupti.Calls().size(), calls);
  }
}

// The support query is no verdict (device 0 reads as "the current context's device"): sampling
// goes on without it.
TEST_F(GpuCounterStartTest, AFailedSupportQueryDoesNotStopTheStart) {
  FakeCupti cupti;
  cupti.Fail("DeviceSupported");
  auto sampler = Sampler(cupti, 1);
  ASSERT_TRUE(sampler->Start().ok());
  EXPECT_EQ(cupti.PmSamplersStarted(), 1u);
  sampler->Stop();
  EXPECT_EQ(cupti.PmSamplersEnabled(), 0u);
}

// One device of two refuses to start: it is released at once and named in one line; the other
// samples until the stop, which stops it before disabling it (the start's reverse).
TEST_F(GpuCounterStartTest, ADeviceThatWillNotStartIsReleasedAndTheOtherSamples) {
  FakeCupti cupti;
  cupti.FailAfter("PmSamplingStart", 1);
  auto sampler = Sampler(cupti, 2);
  ASSERT_TRUE(sampler->Start().ok());
  EXPECT_EQ(cupti.PmSamplersEnabled(), 1u);
  EXPECT_EQ(cupti.PmSamplersStarted(), 1u);
  EXPECT_EQ(cupti.Count("PmSamplingDisable"), 1u);
  EXPECT_GT(cupti.FirstIndexOf("PmSamplingDisable"), cupti.LastIndexOf("PmSamplingStart"));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("PM sampling on device 1: PmSamplingStart failed"));
  sampler->Stop();
  EXPECT_EQ(cupti.PmSamplersEnabled(), 0u);
  ASSERT_NE(cupti.LastIndexOf("PmSamplingStop"), -1);
  EXPECT_LT(cupti.LastIndexOf("PmSamplingStop"), cupti.LastIndexOf("PmSamplingDisable"));
}

// Every device refusing for the same reason: one error naming them all, nothing held.
TEST_F(GpuCounterStartTest, EveryDeviceRefusingIsOneErrorAndNothingHeld) {
  FakeCupti cupti;
  cupti.Fail("PmSamplingStart");
  auto sampler = Sampler(cupti, 2);
  const absl::Status started = sampler->Start();
  EXPECT_FALSE(started.ok());
  EXPECT_THAT(std::string(started.message()), HasSubstr("PM sampling on devices 0, 1: PmSamplingStart failed"));
  EXPECT_EQ(cupti.Count("PmSamplingDisable"), 2u);
  EXPECT_EQ(cupti.PmSamplersEnabled(), 0u);
  EXPECT_TRUE(warnings_.empty());
}

// ---- A monitor-mode capture's top-down ---------------------------------------------------------

constexpr char kKernel[] = "_Z10fakeKernelPf";  // the fabricated records' kernel

class TopDownLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(scratch_.path().empty());
    dir_ = scratch_.path();
    config_.mode = settings::CollectionMode::kMonitor;
    config_.overhead_budget = 0;  // recorded all the time
    // Lean calls by API records, so that the launch callbacks are the kernel metrics' alone.
    config_.lean_calls_by_records = true;
    config_.output = "";
    config_.control = false;
    config_.quiet = false;
    config_.gpu_metrics = true;
    config_.flush_period_ms = 60'000;  // no periodic flush: the test hands over every buffer
    config_.buffer_bytes = 64 * FakeCupti::kRecordSlot;
    const auto [domain, cbid] = KernelMetricsCollector::Callbacks().front();
    launch_callback_ = absl::StrCat(static_cast<int>(domain), ":", cbid);
  }
  void TearDown() override {
    if (CollectorActive()) (void)StopCollector(nullptr);
  }

  // Starts the session and waits for the counters over time to sample; the calls logged so far
  // are forgotten, so the indices below count from there.
  void StartSampling() {
    ASSERT_TRUE(StartCollector(config_, "session", cupti_).ok());
    ASSERT_TRUE(Eventually([&] { return cupti_.PmSamplersStarted() == 1; }));
    cupti_.ClearCalls();
  }

  // A capture of 0.3 s whose window runs five launches of kKernel, then its top-down: one hot
  // kernel, `launches` launches of it, waited for at most `wait_seconds`.
  void Capture(uint64_t launches, double wait_seconds) {
    CaptureSpec spec;
    spec.path = path_ = dir_ + "/capture.cuscope";
    spec.seconds = 0.3;
    spec.top_down_kernels = 1;
    spec.top_down_launches = launches;
    spec.top_down_wait_seconds = wait_seconds;
    ASSERT_TRUE(CaptureCollector(spec).ok());
    cupti_.AdvanceClock(10'000'000'000ull);
    // The window's kernels wait in a buffer only a forced flush hands over, as the program's later
    // work keeps it open.
    ASSERT_TRUE(cupti_.HoldKernelsUntilForcedFlush(5, 5'000'000'000ull));
  }

  // Launches kKernel until the Range Profiler was asked to start (the choice is the writer's, a
  // moment after the window): the launch that makes it, and any before, are the program's.
  bool LaunchUntilProfilerStarts() {
    return Eventually([&] {
      cupti_.CallKernelLaunch(++correlation_, kKernel);
      return cupti_.Count("RangeProfilerStart") >= 1;
    });
  }

  // The capture's file once written, and the session's lines meanwhile.
  core::Trace CaptureWritten() {
    core::Trace t = LoadWhenComplete(path_);
    EXPECT_TRUE(Eventually([] {
      auto status = CollectorStatus();
      return status.ok() && !status->capture_busy();
    }));
    return t;
  }

  static size_t LinesWith(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) n += absl::StrContains(line, what) ? 1 : 0;
    return n;
  }

  testing::ScratchDir scratch_{"cuscope_profiler_lifecycle"};  // removed after TearDown stopped the collector
  std::string dir_, path_, launch_callback_;
  settings::Config config_;
  FakeCupti cupti_;
  uint32_t correlation_ = 1000;
};

// The order a user's GPU sees: the counters over time stop and let go of the GPU's counters before
// the launch callbacks go on and the Range Profiler is enabled; the profiler starts and stops
// around the hot kernel's launch; afterwards it is disabled, the callbacks go off, and the counters
// over time are set up and sample again. The launch's metrics reach the capture.
TEST_F(TopDownLifecycleTest, CountersPauseForTheProfiledLaunchesAndResumeAfter) {
  StartSampling();
  ::testing::internal::CaptureStderr();
  Capture(/*launches=*/1, /*wait_seconds=*/10);
  ASSERT_TRUE(LaunchUntilProfilerStarts());
  core::Trace t = CaptureWritten();
  ASSERT_TRUE(Eventually([&] { return cupti_.PmSamplersStarted() == 1; })) << "the counters resume";
  const std::string err = ::testing::internal::GetCapturedStderr();

  const int pm_stop = cupti_.FirstIndexOf("PmSamplingStop");
  const int pm_disable = cupti_.FirstIndexOf("PmSamplingDisable");
  const int callbacks_on = cupti_.FirstIndexOf("EnableCallback:" + launch_callback_);
  const int range_enable = cupti_.FirstIndexOf("RangeProfilerEnable");
  const int range_start = cupti_.FirstIndexOf("RangeProfilerStart");
  const int range_stop = cupti_.FirstIndexOf("RangeProfilerStop");
  const int range_disable = cupti_.FirstIndexOf("RangeProfilerDisable");
  const int callbacks_off = cupti_.FirstIndexOf("DisableCallback:" + launch_callback_);
  const int pm_enable = cupti_.FirstIndexOf("PmSamplingEnable");
  const int pm_start = cupti_.FirstIndexOf("PmSamplingStart");
  ASSERT_NE(pm_stop, -1);
  EXPECT_LT(pm_stop, pm_disable);
  EXPECT_LT(pm_disable, callbacks_on) << "the counters are free before kernel metrics begin";
  EXPECT_LT(callbacks_on, range_enable);
  EXPECT_LT(range_enable, range_start);
  EXPECT_LT(range_start, range_stop);
  EXPECT_LT(range_stop, range_disable);
  EXPECT_LT(range_disable, callbacks_off);
  EXPECT_LT(callbacks_off, pm_enable) << "the Range Profiler lets go before the counters resume";
  EXPECT_LT(pm_enable, pm_start);
  EXPECT_EQ(cupti_.Count("RangeProfilerStart"), 1u) << "one launch asked for";
  EXPECT_EQ(cupti_.RangeProfilersEnabled(), 0u);
  EXPECT_EQ(cupti_.PmSamplersEnabled(), 1u);

  EXPECT_EQ(t.kernels.size(), 5u);
  ASSERT_EQ(t.metrics.size(), 1u);
  EXPECT_THAT(err, HasSubstr("top-down: 1 of 1 launches of 1 hot kernels profiled"));
  EXPECT_EQ(LinesWith(err, "kernel metrics are off"), 0u) << err;
  CollectorSummary summary;
  ASSERT_TRUE(StopCollector(&summary).ok());
  EXPECT_EQ(summary.launches_profiled, 1u);
  EXPECT_EQ(cupti_.PmSamplersEnabled(), 0u) << "the stop gives the counters back";
}

// The Range Profiler refuses to start: one line says kernel metrics are off, the profiler is
// disabled at once (its start undone), later launches are not profiled, the counters over time
// resume when the top-down's wait is over, and the session records on.
TEST_F(TopDownLifecycleTest, AFailedProfilerStartResumesTheCountersWithOneLine) {
  cupti_.Fail("RangeProfilerStart");
  StartSampling();
  ::testing::internal::CaptureStderr();
  Capture(/*launches=*/2, /*wait_seconds=*/0.5);
  ASSERT_TRUE(LaunchUntilProfilerStarts());
  const int failed_start = cupti_.FirstIndexOf("RangeProfilerStart");
  const int range_disable = cupti_.FirstIndexOf("RangeProfilerDisable");
  EXPECT_GT(range_disable, failed_start) << "the failed start is undone";
  EXPECT_EQ(cupti_.RangeProfilersEnabled(), 0u) << "at once, not at the top-down's end";
  for (int i = 0; i < 3; ++i) cupti_.CallKernelLaunch(++correlation_, kKernel);
  core::Trace t = CaptureWritten();
  ASSERT_TRUE(Eventually([&] { return cupti_.PmSamplersStarted() == 1; })) << "the counters resume";
  const std::string err = ::testing::internal::GetCapturedStderr();

  EXPECT_EQ(cupti_.Count("RangeProfilerStart"), 1u) << "metrics are off: no later launch is profiled";
  EXPECT_EQ(cupti_.Count("RangeProfilerEnable"), 1u);
  const int callbacks_off = cupti_.FirstIndexOf("DisableCallback:" + launch_callback_);
  EXPECT_LT(range_disable, callbacks_off);
  EXPECT_LT(callbacks_off, cupti_.FirstIndexOf("PmSamplingEnable"));
  EXPECT_EQ(LinesWith(err, "cuscope: kernel metrics are off: RangeProfilerStart failed"), 1u) << err;
  EXPECT_EQ(LinesWith(err, "kernel metrics are off"), 1u) << err;
  EXPECT_THAT(err, HasSubstr("top-down: 0 of 2 launches of 1 hot kernels profiled"));
  EXPECT_EQ(t.kernels.size(), 5u);
  EXPECT_TRUE(t.metrics.empty());

  // Nothing else broke: the monitor counts the program's kernels, and the session stops cleanly.
  ASSERT_TRUE(cupti_.DeliverKernels(4, 20'000'000'000ull));
  cupti_.AdvanceClock(200'000'000'000ull);  // the monitor's intervals close
  EXPECT_TRUE(Eventually([] {
    auto status = CollectorStatus();
    return status.ok() && status->devices_size() == 1 && status->devices(0).kernels() == 5u + 4;
  }));
  ASSERT_TRUE(StopCollector(nullptr).ok());
  EXPECT_EQ(cupti_.PmSamplersEnabled(), 0u);
  EXPECT_EQ(cupti_.RangeProfilersEnabled(), 0u);
}

}  // namespace
}  // namespace cuscope::cupti
