// A duty cycle's estimates against the truth of fabricated programs: what a full recording would
// have shown, against what the windows saw and scaled.
#include "lib/monitor/sample_windows.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/monitor/interval_aggregator.h"

// A namespace of its own: other files of this test program have helpers of the same names
// (kMs, Kernel() and FakeApiName), and CI compiles them together (CUSCOPE_UNITY_TESTS).
namespace cuscope::monitor::sample_windows_test {
namespace {

constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kOrigin = 1'000'000'000;
constexpr uint32_t kLaunchCbid = 1;
constexpr uint32_t kSyncCbid = 2;

std::string FakeApiName(v1::ApiDomain, uint32_t cbid) {
  if (cbid == kLaunchCbid) return "cudaLaunchKernel_v7000";
  if (cbid == kSyncCbid) return "cudaStreamSynchronize_v3020";
  return "";
}

IntervalAggregator::Options Options(bool sampled) {
  IntervalAggregator::Options o;
  o.interval_ns = 1000 * kMs;
  o.api_name = FakeApiName;
  o.sampled = sampled;
  return o;
}

core::ApiActivity Call(uint32_t cbid, uint64_t start, uint64_t end) {
  core::ApiActivity a;
  a.domain = v1::API_DOMAIN_RUNTIME;
  a.callback_id = cbid;
  a.start = start;
  a.end = end;
  return a;
}

core::KernelActivity Kernel(uint64_t start, uint64_t end, std::string_view name) {
  core::KernelActivity k;
  k.start = start;
  k.end = end;
  k.config.name = name;
  k.config.grid_x = 1;
  return k;
}

// A program that launches a kernel every `period`; each runs `run` once the GPU is free (one
// stream); the launch call takes 2 us. Every `name_every`-th kernel is "rare".
struct Program {
  uint64_t period = 10 * kUs;
  uint64_t run = 5 * kUs;
  uint64_t latency = 4 * kUs;  // launch to start on an idle GPU
  int name_every = 10;
};

// Feeds what a recording would see: every call and kernel when `recording(t)` held at the launch.
template <typename Recording>
void Feed(IntervalAggregator& agg, const Program& p, uint64_t from, uint64_t to, Recording recording) {
  uint64_t gpu_free = 0;
  int i = 0;
  for (uint64_t t = from; t < to; t += p.period, ++i) {
    const uint64_t call_end = t + 2 * kUs;
    const uint64_t start = std::max(call_end + p.latency, gpu_free);
    const uint64_t end = start + p.run;
    gpu_free = end;
    if (!recording(t)) continue;
    agg.Add(Call(kLaunchCbid, t, call_end));
    agg.Add(Kernel(start, end, i % p.name_every == 0 ? "rare" : "common"));
  }
}

// The duty cycle's windows: `windows` per second, `on` long each, at a fixed offset in its slot,
// each standing for `weight` times its length (0: its slot).
struct Duty {
  int windows = 8;
  uint64_t on = 10 * kMs;
  uint64_t offset = 37 * kMs;
  double weight = 0;
  bool Recording(uint64_t t) const {
    const uint64_t slot = 1000 * kMs / windows;
    const uint64_t in_slot = (t - kOrigin) % slot;
    return in_slot >= offset && in_slot < offset + on;
  }
  void Mark(IntervalAggregator& agg, uint64_t seconds) const {
    const uint64_t slot = 1000 * kMs / windows;
    for (uint64_t s = 0; s < seconds * windows; ++s) {
      agg.OpenSample(kOrigin + s * slot + offset, weight > 0 ? weight : static_cast<double>(slot) / static_cast<double>(on));
      agg.CloseSample(kOrigin + s * slot + offset + on);
    }
  }
};

const DeviceFigures& OnlyDevice(const std::vector<IntervalFigures>& closed) {
  EXPECT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].devices.size(), 1u);
  return closed[0].devices[0];
}
// A reference into a temporary would dangle once the statement ends: name the intervals first.
const DeviceFigures& OnlyDevice(std::vector<IntervalFigures>&& closed) = delete;

double BusyShare(const DeviceFigures& d) {
  return 100.0 * static_cast<double>(d.busy_ns) / static_cast<double>(d.busy_ns + d.idle_ns);
}

TEST(SampleWindowsTest, LaunchBoundProgramsCountsAndBusyShareComeOutOfEightPercentOfTheTime) {
  const Program p;  // half busy: 5 us of work every 10 us
  IntervalAggregator full(Options(false), kOrigin);
  Feed(full, p, kOrigin, kOrigin + 1000 * kMs, [](uint64_t) { return true; });
  const auto full_closed = full.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures truth = OnlyDevice(full_closed);

  const Duty duty;
  IntervalAggregator sampled(Options(true), kOrigin);
  duty.Mark(sampled, 1);
  Feed(sampled, p, kOrigin, kOrigin + 1000 * kMs, [&](uint64_t t) { return duty.Recording(t); });
  const auto closed = sampled.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures& d = OnlyDevice(closed);

  EXPECT_TRUE(closed[0].estimated);
  EXPECT_EQ(closed[0].sample_windows, 8u);
  EXPECT_EQ(closed[0].observed_ns, 80 * kMs);
  EXPECT_NEAR(static_cast<double>(d.kernels), static_cast<double>(truth.kernels), 0.01 * truth.kernels);
  EXPECT_NEAR(static_cast<double>(d.kernel_gpu_ns), static_cast<double>(truth.kernel_gpu_ns), 0.01 * truth.kernel_gpu_ns);
  EXPECT_NEAR(static_cast<double>(closed[0].launch_calls), static_cast<double>(truth.kernels), 0.01 * truth.kernels);
  EXPECT_NEAR(BusyShare(d), BusyShare(truth), 1.0);
  // The device's time starts at its first recorded work: the first window's.
  EXPECT_EQ(d.busy_ns + d.idle_ns, 1000 * kMs - duty.offset - 6 * kUs);
  // The same kernels lead, in the same order, each within a few percent.
  ASSERT_EQ(d.top_kernels.size(), truth.top_kernels.size());
  for (size_t i = 0; i < d.top_kernels.size(); ++i) {
    EXPECT_EQ(d.top_kernels[i].name, truth.top_kernels[i].name);
    EXPECT_NEAR(static_cast<double>(d.top_kernels[i].gpu_ns), static_cast<double>(truth.top_kernels[i].gpu_ns),
                0.05 * truth.top_kernels[i].gpu_ns);
  }
  // A steady program: the windows agree, and the bounds say so.
  EXPECT_GE(d.busy_share_bound, 0.0);
  EXPECT_LT(d.busy_share_bound, 1.0);
  EXPECT_GE(closed[0].count_bound, 0.0);
  EXPECT_LT(closed[0].count_bound, 0.02);
}

// A GPU-bound program: a kernel of 10 us launched every 10 us, each starting 2 ms after its launch
// (the queue ahead of it); the GPU never idles. `with_calls`: the launch calls are recorded too.
DeviceFigures GpuBound(bool with_calls) {
  const Duty duty;
  IntervalAggregator sampled(Options(true), kOrigin);
  duty.Mark(sampled, 1);
  for (uint64_t t = kOrigin; t < kOrigin + 1000 * kMs; t += 10 * kUs) {
    if (!duty.Recording(t)) continue;
    if (with_calls) sampled.Add(Call(kLaunchCbid, t, t + 2 * kUs));
    sampled.Add(Kernel(t + 2 * kMs, t + 2 * kMs + 10 * kUs, "k"));
  }
  const auto closed = sampled.CloseBefore(kOrigin + 1000 * kMs);
  return OnlyDevice(closed);
}

TEST(SampleWindowsTest, AGpuBoundProgramStaysFullyBusyThoughEachWindowsWorkStartsLate) {
  // Before each window's first kernel the GPU ran the earlier, unrecorded ones: busy, not idle.
  EXPECT_GT(BusyShare(GpuBound(/*with_calls=*/true)), 99.9);
}

TEST(SampleWindowsTest, EachWindowCountsForTheTimeItStandsForWhenTheDutyChanges) {
  // Half a second with a launch every 100 us, recorded whole (a window of weight 1), then half a
  // second of a launch storm (every 10 us) recorded 10 ms in each 125 ms slot (weight 12.5).
  // Pooling the windows' host time would count the storm at a fraction of its rate.
  const Program quiet{.period = 100 * kUs};
  const Program storm;
  IntervalAggregator full(Options(false), kOrigin);
  Feed(full, quiet, kOrigin, kOrigin + 500 * kMs, [](uint64_t) { return true; });
  Feed(full, storm, kOrigin + 500 * kMs, kOrigin + 1000 * kMs, [](uint64_t) { return true; });
  const auto full_closed = full.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures truth = OnlyDevice(full_closed);

  IntervalAggregator sampled(Options(true), kOrigin);
  sampled.OpenSample(kOrigin, 1);
  sampled.CloseSample(kOrigin + 500 * kMs);
  for (uint64_t s = 4; s < 8; ++s) {
    sampled.OpenSample(kOrigin + s * 125 * kMs + 37 * kMs, 12.5);
    sampled.CloseSample(kOrigin + s * 125 * kMs + 47 * kMs);
  }
  const auto recording = [](uint64_t t) {
    const uint64_t in_slot = (t - kOrigin) % (125 * kMs);
    return t < kOrigin + 500 * kMs || (in_slot >= 37 * kMs && in_slot < 47 * kMs);
  };
  Feed(sampled, quiet, kOrigin, kOrigin + 500 * kMs, recording);
  Feed(sampled, storm, kOrigin + 500 * kMs, kOrigin + 1000 * kMs, recording);
  const auto closed = sampled.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures& d = OnlyDevice(closed);
  EXPECT_NEAR(static_cast<double>(d.kernels), static_cast<double>(truth.kernels), 0.01 * truth.kernels);
  EXPECT_NEAR(static_cast<double>(closed[0].launch_calls), static_cast<double>(truth.kernels), 0.01 * truth.kernels);
  // Busy 5 of every 100 us, then 5 of every 10: 27.5% in all.
  EXPECT_NEAR(BusyShare(truth), 27.5, 0.1);
  EXPECT_NEAR(BusyShare(d), BusyShare(truth), 1.0);
}

TEST(SampleWindowsTest, WindowsThatStandForThemselvesAreNotScaled) {
  // The negative control: the same storm's windows at weight 1 (recording everything there and
  // nothing else) count what they recorded, no more.
  const Program storm;
  const Duty duty{.weight = 1};
  IntervalAggregator sampled(Options(true), kOrigin);
  duty.Mark(sampled, 1);
  Feed(sampled, storm, kOrigin, kOrigin + 1000 * kMs, [&](uint64_t t) { return duty.Recording(t); });
  const auto closed = sampled.CloseBefore(kOrigin + 1000 * kMs);
  EXPECT_EQ(OnlyDevice(closed).kernels, 8u * 1000);
  EXPECT_EQ(closed[0].launch_calls, 8u * 1000);
}

TEST(SampleWindowsTest, AWindowThatRanLongStandsForItsSlotOnly) {
  // Planned 10 ms of a 125 ms slot (weight 12.5), it closed after 25 ms: weight 5 at the close.
  const Program storm;
  IntervalAggregator sampled(Options(true), kOrigin);
  for (uint64_t s = 0; s < 8; ++s) {
    sampled.OpenSample(kOrigin + s * 125 * kMs + 37 * kMs, 12.5);
    sampled.CloseSample(kOrigin + s * 125 * kMs + 62 * kMs, 5);
  }
  Feed(sampled, storm, kOrigin, kOrigin + 1000 * kMs, [](uint64_t t) {
    const uint64_t in_slot = (t - kOrigin) % (125 * kMs);
    return in_slot >= 37 * kMs && in_slot < 62 * kMs;
  });
  const auto closed = sampled.CloseBefore(kOrigin + 1000 * kMs);
  EXPECT_NEAR(static_cast<double>(OnlyDevice(closed).kernels), 100'000.0, 1000.0);
}

// A GPU-bound program 100 ms behind its host: a launch every 200 us until 875 ms, each kernel
// 200 us, each starting 100 ms after its launch. The first half second is recorded whole (weight 1), the rest 10
// ms of each 125 ms slot (weight 12.5). Kernels are recorded as their launch found recording.
DeviceFigures DeepQueue(bool with_correlation) {
  IntervalAggregator agg(Options(true), kOrigin);
  agg.OpenSample(kOrigin, 1);
  agg.CloseSample(kOrigin + 500 * kMs);
  for (uint64_t s = 4; s < 8; ++s) {
    agg.OpenSample(kOrigin + s * 125 * kMs + 37 * kMs, 12.5);
    agg.CloseSample(kOrigin + s * 125 * kMs + 47 * kMs);
  }
  uint32_t id = 1;
  for (uint64_t t = kOrigin; t < kOrigin + 875 * kMs; t += 200 * kUs, ++id) {
    const uint64_t in_slot = (t - kOrigin) % (125 * kMs);
    if (t >= kOrigin + 500 * kMs && (in_slot < 37 * kMs || in_slot >= 47 * kMs)) continue;
    core::ApiActivity call = Call(kLaunchCbid, t, t + 2 * kUs);
    core::KernelActivity k = Kernel(t + 100 * kMs, t + 100 * kMs + 200 * kUs, "k");
    if (with_correlation) call.correlation_id = k.correlation_id = id;
    agg.Add(call);
    agg.Add(k);
  }
  const auto closed = agg.CloseBefore(kOrigin + 1000 * kMs);
  return OnlyDevice(closed);
}

TEST(SampleWindowsTest, AKernelBelongsToTheWindowOfItsLaunchNotOfItsStart) {
  // 4,375 launches: 2,500 in the first half second, 1,875 in the next three slots (50 a window
  // recorded).
  const DeviceFigures d = DeepQueue(/*with_correlation=*/true);
  EXPECT_NEAR(static_cast<double>(d.kernels), 4375.0, 50.0);
  // Busy all along: before each window's kernels start, the GPU ran what was queued before it.
  EXPECT_GT(BusyShare(d), 95.0);
}

TEST(SampleWindowsTest, WithoutItsLaunchAKernelGoesToTheWindowOfItsStart) {
  // The control: by their starts, the last 100 ms of whole recording's kernels (500) run in the
  // first weighted window's time and count 12.5 times each.
  EXPECT_GT(static_cast<double>(DeepQueue(/*with_correlation=*/false).kernels), 6000.0);
}

TEST(SampleWindowsTest, AGraphsKernelsAreCountedWholeAndTheOthersScaled) {
  // CUPTI records a graph's kernels as its instantiation found recording: on, every launch's,
  // windows or not. 1,000 graph kernels over the second and 80 plain ones in the windows (10 ms
  // of each 125 ms slot): 1,000 and 1,000.
  IntervalAggregator agg(Options(true), kOrigin);
  const Duty duty;  // 10 ms of each 125 ms slot: weight 12.5
  duty.Mark(agg, 1);
  for (uint64_t s = 0; s < 8; ++s) {
    const uint64_t on = kOrigin + s * 125 * kMs + duty.offset;
    for (uint64_t k = 0; k < 10; ++k) agg.Add(Kernel(on + k * kMs, on + k * kMs + kUs, "plain"));
  }
  for (uint64_t k = 0; k < 1000; ++k) {
    core::KernelActivity g = Kernel(kOrigin + k * kMs + 500 * kUs, kOrigin + k * kMs + 501 * kUs, "node");
    g.graph_id = 7;
    agg.Add(g);
  }
  const auto closed = agg.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures& d = OnlyDevice(closed);
  EXPECT_EQ(d.kernels, 2000u);
  ASSERT_EQ(d.top_kernels.size(), 2u);
  for (const KernelFigures& k : d.top_kernels) EXPECT_EQ(k.launches, 1000u) << k.name;
}

TEST(SampleWindowsTest, WithoutAGraphTheSameKernelsAreScaled) {
  // The control: the node kernels without a graph id are samples too (12.5 times as many).
  IntervalAggregator agg(Options(true), kOrigin);
  const Duty duty;
  duty.Mark(agg, 1);
  for (uint64_t s = 0; s < 8; ++s) {
    const uint64_t on = kOrigin + s * 125 * kMs + duty.offset;
    for (uint64_t k = 0; k < 10; ++k) agg.Add(Kernel(on + k * kMs + 500 * kUs, on + k * kMs + 501 * kUs, "node"));
  }
  const auto closed = agg.CloseBefore(kOrigin + 1000 * kMs);
  EXPECT_EQ(OnlyDevice(closed).kernels, 1000u);
}

TEST(SampleWindowsTest, WithoutTheLaunchCallsTheStretchBeforeTheFirstWorkCountsAsIdle) {
  // The negative control: nothing says the GPU was busy before each window's first kernel, and
  // that stretch (2 of each window's 12 ms) counts as idle; the device's time starts at the first
  // window's first kernel, so 7 windows of 12 ms and one of 10: 14 of 94 ms idle.
  EXPECT_NEAR(BusyShare(GpuBound(/*with_calls=*/false)), 100.0 * 80 / 94, 0.01);
}

TEST(SampleWindowsTest, AWaitOfExactlyTheQueuedThresholdIsNotBusyAndOneNanosecondMoreIs) {
  for (uint64_t extra : {uint64_t{0}, uint64_t{1}}) {
    SCOPED_TRACE(extra);
    IntervalAggregator agg(Options(true), kOrigin);
    agg.OpenSample(kOrigin + 100 * kMs);
    agg.CloseSample(kOrigin + 110 * kMs);
    const uint64_t call_end = kOrigin + 100 * kMs + 2 * kUs;
    agg.Add(Call(kLaunchCbid, kOrigin + 100 * kMs, call_end));
    const uint64_t start = call_end + kQueuedNs + extra;
    agg.Add(Kernel(start, kOrigin + 110 * kMs, "k"));
    // Another kernel earlier in the interval, so the device's span begins before the window.
    agg.Add(Kernel(kOrigin + 1 * kMs, kOrigin + 2 * kMs, "k"));
    const auto closed = agg.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures& d = OnlyDevice(closed);
    const uint64_t waited_ns = start - (kOrigin + 100 * kMs);
    // The window's GPU time is 10 ms; busy is its kernel, plus the wait when it counts as busy.
    const uint64_t observed_busy = (kOrigin + 110 * kMs - start) + (extra == 1 ? waited_ns : 0);
    const double expected = static_cast<double>(observed_busy) / (10.0 * kMs) * 999.0 * kMs;
    EXPECT_NEAR(static_cast<double>(d.busy_ns), expected, 2.0);
  }
}

TEST(SampleWindowsTest, IdleByCauseIsScaledAndStillSumsToTheIdleTime) {
  IntervalAggregator agg(Options(true), kOrigin);
  agg.Add(Kernel(kOrigin, kOrigin + 1 * kMs, "k"));  // the device's span starts at the origin
  for (uint64_t w = 0; w < 4; ++w) {
    const uint64_t on = kOrigin + w * 250 * kMs + 100 * kMs;
    agg.OpenSample(on, 250.0 / 20);  // 20 ms of each 250 ms slot
    agg.CloseSample(on + 20 * kMs);
    agg.Add(Call(kLaunchCbid, on, on + 1 * kUs));
    agg.Add(Kernel(on + 5 * kUs, on + 5 * kMs, "k"));  // 5 ms busy
    agg.Add(Call(kSyncCbid, on + 5 * kMs, on + 15 * kMs));  // 10 ms waiting, GPU idle
  }
  const auto closed = agg.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures& d = OnlyDevice(closed);
  uint64_t sum = 0;
  for (uint64_t v : d.idle_by_cause_ns) sum += v;
  EXPECT_EQ(sum, d.idle_ns);
  EXPECT_EQ(d.busy_ns + d.idle_ns, 1000 * kMs);
  // Each window: 5 of 20 ms busy, 10 waiting, 5 outside CUDA.
  EXPECT_NEAR(BusyShare(d), 25.0, 0.1);
  EXPECT_NEAR(static_cast<double>(d.idle_by_cause_ns[static_cast<int>(HostCause::kSync)]), 500.0 * kMs, 1.0 * kMs);
  EXPECT_NEAR(static_cast<double>(closed[0].sync_wait_ns), 500.0 * kMs, 1.0 * kMs);
  EXPECT_EQ(closed[0].sync_calls, 50u);  // 4 calls in 80 ms of 1 s
}

TEST(SampleWindowsTest, AWindowOpenAcrossTheIntervalsEndIsSplitBetweenThem) {
  IntervalAggregator agg(Options(true), kOrigin);
  agg.OpenSample(kOrigin);  // full recording: one window that never closes
  agg.Add(Call(kLaunchCbid, kOrigin, kOrigin + 1 * kUs));
  agg.Add(Kernel(kOrigin + 10 * kUs, kOrigin + 500 * kMs, "k"));
  agg.Add(Call(kLaunchCbid, kOrigin + 1200 * kMs, kOrigin + 1200 * kMs + kUs));
  agg.Add(Kernel(kOrigin + 1200 * kMs + 10 * kUs, kOrigin + 1300 * kMs, "k"));
  const auto closed = agg.CloseBefore(kOrigin + 2000 * kMs);
  ASSERT_EQ(closed.size(), 2u);
  for (const IntervalFigures& f : closed) {
    EXPECT_EQ(f.observed_ns, 1000 * kMs);  // the whole interval: nothing scaled
    EXPECT_EQ(f.sample_windows, 1u);
    ASSERT_EQ(f.devices.size(), 1u);
    EXPECT_EQ(f.devices[0].kernels, 1u);
    EXPECT_EQ(f.devices[0].busy_share_bound, -1);  // one window: no spread to bound it by
  }
  EXPECT_EQ(closed[0].devices[0].busy_ns, 500 * kMs - 10 * kUs);
  EXPECT_EQ(closed[1].devices[0].busy_ns, 100 * kMs - 10 * kUs);
}

TEST(SampleWindowsTest, AnIntervalWithoutAWindowEstimatesNothingRatherThanZeroWork) {
  IntervalAggregator agg(Options(true), kOrigin);
  agg.OpenSample(kOrigin + 100 * kMs);
  agg.CloseSample(kOrigin + 110 * kMs);
  agg.Add(Kernel(kOrigin + 100 * kMs, kOrigin + 105 * kMs, "k"));
  const auto closed = agg.CloseBefore(kOrigin + 2000 * kMs);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[1].sample_windows, 0u);
  EXPECT_EQ(closed[1].observed_ns, 0u);
  EXPECT_EQ(closed[1].count_bound, -1);
  ASSERT_EQ(closed[1].devices.size(), 1u);
  EXPECT_EQ(closed[1].devices[0].busy_ns, 0u);
  EXPECT_EQ(closed[1].devices[0].idle_ns, 0u);
}

TEST(SampleWindowsTest, TheBoundIsTheStandardErrorOfTheWindowsAndUnknownBelowTwo) {
  EXPECT_EQ(MeanBound95({}), -1);
  EXPECT_EQ(MeanBound95({5.0}), -1);
  EXPECT_DOUBLE_EQ(MeanBound95({5.0, 5.0, 5.0}), 0.0);
  // sd of {0, 10} is 7.071; / sqrt(2) = 5; x 1.96.
  EXPECT_NEAR(MeanBound95({0.0, 10.0}), 9.8, 1e-9);
}

TEST(SampleWindowsTest, AnUnsteadyProgramGetsAWideBound) {
  // Busy in half the windows, idle in the others.
  IntervalAggregator agg(Options(true), kOrigin);
  agg.Add(Kernel(kOrigin, kOrigin + kUs, "k"));
  for (uint64_t w = 0; w < 8; ++w) {
    const uint64_t on = kOrigin + w * 125 * kMs + 10 * kMs;
    agg.OpenSample(on);
    agg.CloseSample(on + 10 * kMs);
    if (w % 2 == 0) {
      agg.Add(Call(kLaunchCbid, on, on + kUs));
      agg.Add(Kernel(on + 5 * kUs, on + 10 * kMs, "k"));
    }
  }
  const auto closed = agg.CloseBefore(kOrigin + 1000 * kMs);
  const DeviceFigures& d = OnlyDevice(closed);
  EXPECT_NEAR(BusyShare(d), 50.0, 0.5);
  EXPECT_GT(d.busy_share_bound, 30.0);
  EXPECT_GT(closed[0].count_bound, 0.5);
}

}  // namespace
}  // namespace cuscope::monitor::sample_windows_test
