#include "lib/monitor/interval_aggregator.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cuscope::monitor {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kOrigin = 1'000'000'000;  // the session's start on CUPTI's clock

// Callback ids of the fabricated API records, named as CUPTI names them.
enum : uint32_t {
  kLaunchCbid = 1,
  kSyncCbid = 2,
  kGetDeviceCbid = 3,
  kMemcpyCbid = 4,
  kMallocCbid = 5,
  kBeginCaptureCbid = 6,
  kEndCaptureCbid = 7
};
std::string FakeApiName(v1::ApiDomain, uint32_t cbid) {
  switch (cbid) {
    case kLaunchCbid: return "cudaLaunchKernel_v7000";
    case kSyncCbid: return "cudaStreamSynchronize_v3020";
    case kGetDeviceCbid: return "cudaGetDevice_v3020";
    case kMemcpyCbid: return "cudaMemcpy_v3020";
    case kMallocCbid: return "cudaMalloc_v3020";
    case kBeginCaptureCbid: return "cudaStreamBeginCapture_v10000";
    case kEndCaptureCbid: return "cudaStreamEndCapture_v10000";
  }
  return "";
}

IntervalAggregator::Options Options100ms() {
  IntervalAggregator::Options o;
  o.interval_ns = 100 * kMs;
  o.api_name = FakeApiName;
  return o;
}

// Times are in ms after the origin.
core::KernelActivity Kernel(uint64_t start_ms, uint64_t end_ms, std::string_view name = "k", uint32_t device = 0,
                            int grid = 1) {
  core::KernelActivity k;
  k.start = kOrigin + start_ms * kMs;
  k.end = kOrigin + end_ms * kMs;
  k.config.name = name;
  k.config.device = device;
  k.config.grid_x = grid;
  return k;
}

core::ApiActivity Api(uint32_t cbid, uint64_t start_ms, uint64_t end_ms) {
  core::ApiActivity a;
  a.domain = v1::API_DOMAIN_RUNTIME;
  a.callback_id = cbid;
  a.start = kOrigin + start_ms * kMs;
  a.end = kOrigin + end_ms * kMs;
  return a;
}

uint64_t Idle(const DeviceFigures& d, HostCause c) { return d.idle_by_cause_ns[static_cast<int>(c)]; }

TEST(IntervalAggregatorTest, BusyIsTheUnionOfOverlappingKernelsAndIdleTheRest) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(10, 20));
  agg.Add(Kernel(15, 30));
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  ASSERT_EQ(closed.size(), 1u);
  ASSERT_EQ(closed[0].devices.size(), 1u);
  const DeviceFigures& d = closed[0].devices[0];
  EXPECT_EQ(d.busy_ns, 20 * kMs);
  EXPECT_EQ(d.idle_ns, 70 * kMs);  // from the first kernel's start at 10 ms
  EXPECT_EQ(d.kernels, 2u);
  EXPECT_EQ(d.kernel_gpu_ns, 25 * kMs);  // overlapping kernels each count their own time
  EXPECT_EQ(closed[0].start_ns, kOrigin);
  EXPECT_EQ(closed[0].end_ns, kOrigin + 100 * kMs);
}

TEST(IntervalAggregatorTest, IdleIsSplitByWhatTheHostWasDoingSyncBeforeLaunch) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(0, 10));
  agg.Add(Kernel(30, 40));
  agg.Add(Api(kSyncCbid, 45, 60));       // one thread waits ...
  agg.Add(Api(kLaunchCbid, 50, 70));     // ... while another launches: the wait explains 50-60
  agg.Add(Api(kGetDeviceCbid, 70, 90));  // not a call the figures read: host time outside CUDA
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  const DeviceFigures& d = closed.at(0).devices.at(0);
  EXPECT_EQ(d.idle_ns, 80 * kMs);
  EXPECT_EQ(Idle(d, HostCause::kSync), 15 * kMs);
  EXPECT_EQ(Idle(d, HostCause::kLaunch), 10 * kMs);
  EXPECT_EQ(Idle(d, HostCause::kOutsideCuda), 55 * kMs);
  uint64_t sum = 0;
  for (uint64_t ns : d.idle_by_cause_ns) sum += ns;
  EXPECT_EQ(sum, d.idle_ns);
  EXPECT_EQ(closed[0].launch_calls, 1u);
  EXPECT_EQ(closed[0].sync_calls, 1u);
  EXPECT_EQ(closed[0].sync_wait_ns, 15 * kMs);
}

// The context is made inside the program's first CUDA call (here a cudaMalloc): counted as idle,
// that start-up made "alloc" the dominant cause of a short run. An allocation after the device's
// first operation is idle time like any other.
// As the analyzer's gpu.idle counts them (core::CallCategories): a launch made while its thread
// captures a stream records a graph node and runs nothing, so the idle time it covers is setup.
TEST(IntervalAggregatorTest, LaunchesWhileTheirThreadCapturesAStreamAreSetup) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(0, 10));
  agg.Add(Kernel(90, 95));
  const auto on_thread = [](core::ApiActivity a, uint64_t tid) {
    a.tid = tid;
    return a;
  };
  agg.Add(on_thread(Api(kBeginCaptureCbid, 10, 11), 1));
  agg.Add(on_thread(Api(kLaunchCbid, 20, 30), 1));  // captured
  agg.Add(on_thread(Api(kLaunchCbid, 40, 50), 2));  // another thread's launch runs
  agg.Add(on_thread(Api(kEndCaptureCbid, 60, 61), 1));
  agg.Add(on_thread(Api(kLaunchCbid, 70, 80), 1));  // after the capture: a launch again
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  ASSERT_EQ(closed.size(), 1u);
  const DeviceFigures& d = closed[0].devices[0];
  EXPECT_EQ(Idle(d, HostCause::kSetup), 10 * kMs + 2 * kMs);  // the captured launch and both capture calls
  EXPECT_EQ(Idle(d, HostCause::kLaunch), 20 * kMs);
  EXPECT_EQ(closed[0].launch_calls, 3u);  // calls made, captured or not
}

TEST(IntervalAggregatorTest, TheStartUpBeforeTheDevicesFirstOperationIsNeitherBusyNorIdle) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Api(kMallocCbid, 0, 60));
  agg.Add(Kernel(70, 80));
  agg.Add(Api(kMallocCbid, 120, 150));
  agg.Add(Kernel(160, 200));
  const auto closed = agg.CloseBefore(kOrigin + 200 * kMs);
  ASSERT_EQ(closed.size(), 2u);
  const DeviceFigures& first = closed[0].devices.at(0);
  EXPECT_EQ(first.busy_ns, 10 * kMs);
  EXPECT_EQ(first.idle_ns, 20 * kMs);  // 80 to 100 ms
  EXPECT_EQ(Idle(first, HostCause::kAlloc), 0u);
  EXPECT_EQ(Idle(first, HostCause::kOutsideCuda), 20 * kMs);
  const DeviceFigures& second = closed[1].devices.at(0);
  EXPECT_EQ(second.busy_ns, 40 * kMs);
  EXPECT_EQ(second.idle_ns, 60 * kMs);
  EXPECT_EQ(Idle(second, HostCause::kAlloc), 30 * kMs);
}

TEST(IntervalAggregatorTest, ADeviceSeenFirstByItsCountersHasNoIdleTimeUntilItsFirstOperation) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.AddCounter(1, v1::COUNTER_SOURCE_NVML, "nvml.power_w", {kOrigin + 10 * kMs, kOrigin + 20 * kMs, 90.0});
  agg.Add(Kernel(100, 110, "k", 1));  // exactly at the second interval's start
  agg.Add(Kernel(250, 260, "k", 1));
  const auto closed = agg.CloseBefore(kOrigin + 300 * kMs);
  ASSERT_EQ(closed.size(), 3u);
  ASSERT_EQ(closed[0].devices.size(), 1u);  // there, with its counter
  EXPECT_EQ(closed[0].devices[0].device, 1u);
  EXPECT_EQ(closed[0].devices[0].busy_ns, 0u);
  EXPECT_EQ(closed[0].devices[0].idle_ns, 0u);
  ASSERT_EQ(closed[0].devices[0].counters.size(), 1u);
  EXPECT_EQ(closed[1].devices.at(0).busy_ns, 10 * kMs);
  EXPECT_EQ(closed[1].devices[0].idle_ns, 90 * kMs);
  EXPECT_EQ(closed[2].devices.at(0).idle_ns, 90 * kMs);  // after the first operation, idle from the start
}

// A kernel CUPTI timed at zero length adds no busy time, so it is not the device's first operation.
TEST(IntervalAggregatorTest, AZeroLengthKernelIsNotTheFirstOperation) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(20, 20));
  agg.Add(Kernel(50, 60));
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  const DeviceFigures& d = closed.at(0).devices.at(0);
  EXPECT_EQ(d.kernels, 2u);
  EXPECT_EQ(d.busy_ns, 10 * kMs);
  EXPECT_EQ(d.idle_ns, 40 * kMs);  // from 50 ms
}

TEST(IntervalAggregatorTest, HostCallsDuringBusyTimeExplainNoIdle) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(0, 100));
  agg.Add(Api(kSyncCbid, 10, 90));
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  const DeviceFigures& d = closed.at(0).devices.at(0);
  EXPECT_EQ(d.idle_ns, 0u);
  EXPECT_EQ(Idle(d, HostCause::kSync), 0u);
}

TEST(IntervalAggregatorTest, AKernelAcrossABoundaryGivesEachIntervalItsShareAndCountsWhereItStarted) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(80, 130));
  const auto closed = agg.CloseBefore(kOrigin + 200 * kMs);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].devices.at(0).busy_ns, 20 * kMs);
  EXPECT_EQ(closed[1].devices.at(0).busy_ns, 30 * kMs);
  EXPECT_EQ(closed[0].devices[0].kernels, 1u);
  EXPECT_EQ(closed[0].devices[0].kernel_gpu_ns, 50 * kMs);
  EXPECT_EQ(closed[1].devices[0].kernels, 0u);
}

TEST(IntervalAggregatorTest, ClosesOnlyIntervalsThatEndedAndEmptyOnesToo) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(10, 20));
  EXPECT_TRUE(agg.CloseBefore(kOrigin + 99 * kMs).empty());
  auto closed = agg.CloseBefore(kOrigin + 350 * kMs);
  ASSERT_EQ(closed.size(), 3u);
  // A device that has worked stays in the figures: a server without traffic is 100% idle.
  ASSERT_EQ(closed[2].devices.size(), 1u);
  EXPECT_EQ(closed[2].devices[0].busy_ns, 0u);
  EXPECT_EQ(closed[2].devices[0].idle_ns, 100 * kMs);
  EXPECT_EQ(closed[2].start_ns, kOrigin + 200 * kMs);
}

TEST(IntervalAggregatorTest, ALateRecordCountsInTheOldestOpenIntervalAndIsFlagged) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(10, 20));
  ASSERT_EQ(agg.CloseBefore(kOrigin + 100 * kMs).size(), 1u);
  agg.Add(Kernel(50, 60, "late"));  // belongs to the closed interval
  const auto closed = agg.CloseBefore(kOrigin + 200 * kMs);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].late_records, 1u);
  EXPECT_EQ(closed[0].devices.at(0).kernels, 1u);
  EXPECT_EQ(closed[0].devices[0].kernel_gpu_ns, 10 * kMs);
  EXPECT_EQ(closed[0].devices[0].busy_ns, 0u);  // its time was in the published interval
}

TEST(IntervalAggregatorTest, TopKernelsByTimeThenOtherWithNameGridAndBlockAsTheGroup) {
  auto options = Options100ms();
  options.top_kernels = 2;
  IntervalAggregator agg(options, kOrigin);
  agg.Add(Kernel(0, 30, "gemm", 0, 128));
  agg.Add(Kernel(30, 40, "gemm", 0, 64));  // same name, other grid: its own group
  agg.Add(Kernel(40, 60, "relu"));
  agg.Add(Kernel(60, 61, "relu"));
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  const DeviceFigures& d = closed.at(0).devices.at(0);
  ASSERT_EQ(d.top_kernels.size(), 2u);
  EXPECT_EQ(d.top_kernels[0].name, "gemm");
  EXPECT_EQ(d.top_kernels[0].grid[0], 128u);
  EXPECT_EQ(d.top_kernels[0].gpu_ns, 30 * kMs);
  EXPECT_EQ(d.top_kernels[1].name, "relu");
  EXPECT_EQ(d.top_kernels[1].launches, 2u);
  EXPECT_EQ(d.top_kernels[1].gpu_ns, 21 * kMs);
  EXPECT_EQ(d.other_kernels.name, "");
  EXPECT_EQ(d.other_kernels.launches, 1u);
  EXPECT_EQ(d.other_kernels.gpu_ns, 10 * kMs);
  EXPECT_EQ(d.kernels, 4u);
}

TEST(IntervalAggregatorTest, ExactlyTopNKernelsLeaveOtherEmpty) {
  auto options = Options100ms();
  options.top_kernels = 2;
  IntervalAggregator agg(options, kOrigin);
  agg.Add(Kernel(0, 10, "a"));
  agg.Add(Kernel(10, 20, "b"));
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  const DeviceFigures& d = closed.at(0).devices.at(0);
  EXPECT_EQ(d.top_kernels.size(), 2u);
  EXPECT_EQ(d.other_kernels.launches, 0u);
}

TEST(IntervalAggregatorTest, KernelNamesPastTheBoundCountAsOther) {
  auto options = Options100ms();
  options.max_kernel_names = 2;
  IntervalAggregator agg(options, kOrigin);
  agg.Add(Kernel(0, 10, "a"));
  agg.Add(Kernel(10, 20, "b"));
  agg.Add(Kernel(20, 25, "c"));
  agg.Add(Kernel(25, 27, "a"));  // a remembered name keeps its group
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  const DeviceFigures& d = closed.at(0).devices.at(0);
  ASSERT_EQ(d.top_kernels.size(), 2u);
  EXPECT_EQ(d.top_kernels[0].name, "a");
  EXPECT_EQ(d.top_kernels[0].launches, 2u);
  EXPECT_EQ(d.other_kernels.launches, 1u);
  EXPECT_EQ(d.other_kernels.gpu_ns, 5 * kMs);
}

TEST(IntervalAggregatorTest, BusyPiecesStayBoundedAndBusyTimeOnlyGrowsALittle) {
  auto options = Options100ms();
  options.max_pieces = 16;
  IntervalAggregator agg(options, kOrigin);
  // 1,000 kernels of 50 us with 50 us gaps: 50 ms busy of 100.
  for (uint64_t i = 0; i < 1000; ++i) {
    core::KernelActivity k = Kernel(0, 0);
    k.start = kOrigin + i * 100'000;
    k.end = k.start + 50'000;
    agg.Add(k);
  }
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  const DeviceFigures& d = closed.at(0).devices.at(0);
  EXPECT_GE(d.busy_ns, 50 * kMs);
  EXPECT_LE(d.busy_ns, 100 * kMs);
  EXPECT_EQ(d.kernels, 1000u);
  EXPECT_EQ(d.kernel_gpu_ns, 50 * kMs);
}

TEST(IntervalAggregatorTest, CopiesByDirectionAndMemoryKindMemsetsAndDevices) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  core::MemcpyRecord h2d;
  h2d.start = kOrigin + 1 * kMs;
  h2d.end = kOrigin + 3 * kMs;
  h2d.copy_kind = v1::COPY_KIND_HTOD;
  h2d.src_kind = v1::MEMORY_KIND_PAGEABLE;
  h2d.dst_kind = v1::MEMORY_KIND_DEVICE;
  h2d.bytes = 1000;
  h2d.device = 1;
  agg.Add(h2d);
  h2d.start += 10 * kMs;
  h2d.end += 10 * kMs;
  agg.Add(h2d);
  core::MemcpyRecord d2h = h2d;
  d2h.copy_kind = v1::COPY_KIND_DTOH;
  d2h.src_kind = v1::MEMORY_KIND_DEVICE;
  d2h.dst_kind = v1::MEMORY_KIND_PINNED;
  d2h.bytes = 10;
  d2h.start = kOrigin + 50 * kMs;
  d2h.end = kOrigin + 51 * kMs;
  agg.Add(d2h);
  core::MemsetRecord ms;
  ms.start = kOrigin + 60 * kMs;
  ms.end = kOrigin + 62 * kMs;
  ms.bytes = 64;
  ms.device = 1;
  agg.Add(ms);
  agg.Add(Kernel(0, 1, "k", 0));
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  ASSERT_EQ(closed.at(0).devices.size(), 2u);
  const DeviceFigures& d = closed[0].devices[1];
  EXPECT_EQ(d.device, 1u);
  ASSERT_EQ(d.copies.size(), 2u);
  const CopyFigures& a = d.copies[0].kind == v1::COPY_KIND_HTOD ? d.copies[0] : d.copies[1];
  const CopyFigures& b = d.copies[0].kind == v1::COPY_KIND_HTOD ? d.copies[1] : d.copies[0];
  EXPECT_EQ(a.count, 2u);
  EXPECT_EQ(a.bytes, 2000u);
  EXPECT_EQ(a.gpu_ns, 4 * kMs);
  EXPECT_EQ(a.src_kind, v1::MEMORY_KIND_PAGEABLE);
  EXPECT_EQ(b.bytes, 10u);
  EXPECT_EQ(b.dst_kind, v1::MEMORY_KIND_PINNED);
  EXPECT_EQ(d.memsets, 1u);
  EXPECT_EQ(d.memset_bytes, 64u);
  EXPECT_EQ(d.busy_ns, 7 * kMs);
  EXPECT_EQ(closed[0].devices[0].busy_ns, 1 * kMs);
}

TEST(IntervalAggregatorTest, CountersAreAveragedOverTheIntervalWithTheirPeak) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.AddCounter(0, v1::COUNTER_SOURCE_NVML, "nvml.power_w", {kOrigin + 10 * kMs, kOrigin + 10 * kMs, 300});
  agg.AddCounter(0, v1::COUNTER_SOURCE_NVML, "nvml.power_w", {kOrigin + 60 * kMs, kOrigin + 60 * kMs, 500});
  agg.AddCounter(0, v1::COUNTER_SOURCE_NVML, "nvml.power_w", {kOrigin + 160 * kMs, kOrigin + 160 * kMs, 100});
  const auto closed = agg.CloseBefore(kOrigin + 200 * kMs);
  ASSERT_EQ(closed.size(), 2u);
  ASSERT_EQ(closed[0].devices.at(0).counters.size(), 1u);
  const CounterFigures& c = closed[0].devices[0].counters[0];
  EXPECT_EQ(c.name, "nvml.power_w");
  EXPECT_EQ(c.samples, 2u);
  EXPECT_DOUBLE_EQ(c.mean, 400);
  EXPECT_DOUBLE_EQ(c.max, 500);
  EXPECT_DOUBLE_EQ(closed[1].devices[0].counters.at(0).mean, 100);
}

TEST(IntervalAggregatorTest, CloseAllEndsWithThePartialIntervalAtTheStop) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(120, 140));
  agg.CountDropped(7);
  const auto closed = agg.CloseAll(kOrigin + 150 * kMs);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].records_dropped_by_cupti, 7u);
  EXPECT_EQ(closed[1].start_ns, kOrigin + 100 * kMs);
  EXPECT_EQ(closed[1].end_ns, kOrigin + 150 * kMs);
  EXPECT_EQ(closed[1].devices.at(0).busy_ns, 20 * kMs);
  EXPECT_EQ(closed[1].devices[0].idle_ns, 10 * kMs);  // from the kernel's start at 120 ms to the stop
  EXPECT_TRUE(agg.CloseAll(kOrigin + 150 * kMs).empty());
}

TEST(IntervalAggregatorTest, ARecordBeforeTheOriginCountsInTheFirstInterval) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  core::KernelActivity k = Kernel(0, 5);
  k.start = kOrigin - 3 * kMs;
  agg.Add(k);
  const auto closed = agg.CloseBefore(kOrigin + 100 * kMs);
  EXPECT_EQ(closed.at(0).late_records, 0u);
  EXPECT_EQ(closed[0].devices.at(0).busy_ns, 5 * kMs);
  EXPECT_EQ(closed[0].devices[0].kernel_gpu_ns, 8 * kMs);
}

core::RequestScopeActivity Scope(uint64_t tid, uint64_t id, std::string_view route, uint64_t start_ms,
                                 uint64_t end_ms) {
  core::RequestScopeActivity r;
  r.tid = tid;
  r.id = id;
  r.route = route;
  r.start = kOrigin + start_ms * kMs;
  r.end = end_ms == 0 ? 0 : kOrigin + end_ms * kMs;
  return r;
}

// A request whose kernel and calls come the way the collector hands them over: the scope's begin,
// its calls, its end, then (in a later buffer) its kernel.
TEST(IntervalAggregatorTest, ARequestCountsInTheIntervalItEndedInOnceFinal) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Scope(9, 7, "chat", 110, 0));
  core::ApiActivity launch = Api(kLaunchCbid, 111, 112);
  launch.tid = 9;
  launch.correlation_id = 41;
  agg.Add(launch);
  core::ApiActivity sync = Api(kSyncCbid, 112, 150);
  sync.tid = 9;
  agg.Add(sync);
  agg.Add(Scope(9, 7, "chat", 110, 150));
  core::KernelActivity k = Kernel(130, 150);
  k.correlation_id = 41;
  agg.Add(k);
  std::vector<IntervalFigures> closed = agg.CloseBefore(kOrigin + 200 * kMs);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_TRUE(closed[0].requests.empty());
  ASSERT_EQ(closed[1].requests.size(), 1u);
  const RouteRequestFigures& chat = closed[1].requests[0];
  EXPECT_EQ(chat.route, "chat");
  EXPECT_EQ(chat.requests, 1u);
  EXPECT_DOUBLE_EQ(chat.gpu.sum_seconds, 0.020);
  EXPECT_DOUBLE_EQ(chat.queue.sum_seconds, 0.018);  // its launch returned at 112 ms, it ran at 130 ms
  EXPECT_DOUBLE_EQ(chat.span_max, 0.040);
  // Idle 110-130 ms: 1 ms in the launch call, 18 ms in the sync, 1 ms outside CUDA.
  EXPECT_NEAR(chat.idle[static_cast<int>(HostCause::kSync)].sum_seconds, 0.018, 1e-12);
  EXPECT_NEAR(chat.idle[static_cast<int>(HostCause::kLaunch)].sum_seconds, 0.001, 1e-12);
  EXPECT_NEAR(chat.idle[static_cast<int>(HostCause::kOutsideCuda)].sum_seconds, 0.001, 1e-12);
  EXPECT_EQ(chat.gpu.counts[8], 1u);  // 20 ms: in the (10 ms, 25 ms] bucket
}

TEST(IntervalAggregatorTest, ARequestNotYetFinalWaitsAndTheEndTakesEveryOne) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Scope(9, 7, "chat", 10, 0));
  agg.Add(Scope(9, 7, "chat", 10, 250));
  EXPECT_TRUE(agg.CloseBefore(kOrigin + 200 * kMs)[0].requests.empty());
  std::vector<IntervalFigures> rest = agg.CloseAll(kOrigin + 260 * kMs);
  ASSERT_FALSE(rest.empty());
  size_t requests = 0;
  for (const IntervalFigures& f : rest) {
    for (const RouteRequestFigures& r : f.requests) requests += r.requests;
  }
  EXPECT_EQ(requests, 1u);
}

TEST(IntervalAggregatorTest, NoScopesNoRequestFigures) {
  IntervalAggregator agg(Options100ms(), kOrigin);
  agg.Add(Kernel(10, 20));
  for (const IntervalFigures& f : agg.CloseAll(kOrigin + 100 * kMs)) EXPECT_TRUE(f.requests.empty());
}

}  // namespace
}  // namespace cuscope::monitor
