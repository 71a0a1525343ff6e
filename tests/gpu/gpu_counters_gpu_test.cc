// GPU counters over time on a real GPU: GpuCounterSampler run in this process around a busy kernel
// loop of known length. Every default counter must arrive, SM activity must be high inside the
// loop and near zero outside it (which also proves the PM sample stamps are on the CUPTI clock the
// loop was timed with), NVML must read power, and after Stop the counters must be free for the
// Range Profiler.
#include <cuda.h>
#include <dlfcn.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lib/core/counter_names.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/cupti_params.h"
#include "lib/cupti/gpu_counter_sampler.h"
#include "lib/cupti/pm_sampler.h"
#include "lib/cupti/pm_sampling_config.h"
#include "tests/gpu/gpu_test_support.h"

namespace cuscope::testing {

// gpu_counters_busy.cu
bool InitGpuForCounters(int device, std::string* error);
bool KeepGpuBusy(double seconds, std::string* error);

namespace {

using cupti::CounterBatch;
using cupti::GpuCounterSampler;
using cupti::GpuCounterSamplerOptions;
using Point = core::ChunkBuilder::CounterPoint;

constexpr uint64_t kMs = 1'000'000;

uint64_t Now() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

// The thread's current context, from the driver the CUDA runtime loaded (not linked: the test must
// load and skip on machines without a driver).
CUcontext CurrentContext() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto get = lib ? reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxGetCurrent")) : nullptr;
  CUcontext ctx = nullptr;
  if (get == nullptr || get(&ctx) != CUDA_SUCCESS) return nullptr;
  return ctx;
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Everything the sampler emitted, by source and name (device 0 only is sampled).
struct Collected {
  std::mutex mu;
  std::map<std::string, std::vector<Point>> pm;
  std::map<std::string, std::vector<Point>> nvml;
  std::vector<std::string> warnings;
  int emits = 0;
};

class GpuCountersGpuTest : public testing::GpuTest {};

TEST_F(GpuCountersGpuTest, BusyLoopShowsInEveryDefaultCounterAndTheCountersAreFreedAfter) {
  std::string error;
  ASSERT_TRUE(InitGpuForCounters(0, &error)) << error;
  const CUcontext ctx = CurrentContext();
  ASSERT_NE(ctx, nullptr);

  Collected got;
  GpuCounterSamplerOptions options;
  options.devices = {0};
  GpuCounterSampler sampler(
      cupti::RealCuptiApi(), options,
      [&got](std::vector<CounterBatch> batches) {
        std::lock_guard<std::mutex> lock(got.mu);
        ++got.emits;
        for (auto& b : batches) {
          EXPECT_EQ(b.device, 0u) << b.name;
          auto& series = (b.source == v1::COUNTER_SOURCE_PM_SAMPLING ? got.pm : got.nvml)[b.name];
          series.insert(series.end(), b.points.begin(), b.points.end());
        }
      },
      [&got](const std::string& line) {
        std::lock_guard<std::mutex> lock(got.mu);
        got.warnings.push_back(line);
        std::fprintf(stderr, "cuscope: %s\n", line.c_str());
      });
  const uint64_t t_start = Now();
  const absl::Status started = sampler.Start();
  if (absl::IsPermissionDenied(started)) GTEST_SKIP() << started;
  ASSERT_TRUE(started.ok()) << started;

  SleepMs(400);
  const uint64_t busy_begin = Now();
  ASSERT_TRUE(KeepGpuBusy(0.5, &error)) << error;
  const uint64_t busy_end = Now();
  SleepMs(400);
  sampler.Stop();
  const uint64_t t_stop = Now();
  sampler.Stop();  // idempotent

  std::lock_guard<std::mutex> lock(got.mu);
  EXPECT_TRUE(got.warnings.empty()) << got.warnings.front();
  EXPECT_GE(got.emits, 5);  // ~1.3 s at one emit per 100 ms
  EXPECT_EQ(sampler.overflows(), 0u);
  EXPECT_GT(sampler.samples(), 0u);
  std::printf("busy %.0f ms; samples %llu, overflows %llu\n", (busy_end - busy_begin) / 1e6,
              static_cast<unsigned long long>(sampler.samples()),
              static_cast<unsigned long long>(sampler.overflows()));

  // Samples wholly inside the loop (a margin for launch and drain) and wholly outside it.
  const auto split = [&](const std::string& m, std::vector<double>* busy, std::vector<double>* idle) {
    auto it = got.pm.find(m);
    if (it == got.pm.end()) return;
    for (const Point& p : it->second) {
      if (p.start >= busy_begin + 50 * kMs && p.end + 50 * kMs <= busy_end) busy->push_back(p.value);
      if (p.end + 50 * kMs <= busy_begin || p.start >= busy_end + 50 * kMs) idle->push_back(p.value);
    }
  };
  // Printed for the record first: what each counter read, busy and idle.
  for (const std::string& m : cupti::DefaultPmSamplingMetrics()) {
    std::vector<double> busy, idle;
    split(m, &busy, &idle);
    std::printf("%-75s busy median %10.4g (%zu samples)  idle median %10.4g (%zu samples)\n", m.c_str(), Median(busy),
                busy.size(), Median(idle), idle.size());
  }

  // Every default counter the device has arrived, stamped within the run on the CUPTI clock.
  // NVLink's are sampled only where the GPU's links are available (not on a lone, passed-through
  // GPU): there, being in counters() means samples.
  const std::vector<std::string> names = sampler.counters();
  for (const std::string& m : cupti::DefaultPmSamplingMetrics()) {
    const bool listed = std::find(names.begin(), names.end(), m) != names.end();
    const bool optional = m == core::counter::kPmNvlinkRxBytesPerSecond || m == core::counter::kPmNvlinkTxBytesPerSecond;
    if (!listed) {
      EXPECT_TRUE(optional) << m << " missing from counters()";
      EXPECT_EQ(got.pm.count(m), 0u) << m << " sampled but not listed";
      continue;
    }
    auto it = got.pm.find(m);
    ASSERT_TRUE(it != got.pm.end() && !it->second.empty()) << "no samples of " << m;
    for (const Point& p : it->second) {
      ASSERT_LE(p.start, p.end) << m;
      ASSERT_GE(p.start + 1000 * kMs, t_start) << m << ": sample before the run; not the CUPTI clock?";
      ASSERT_LE(p.end, t_stop + 1000 * kMs) << m << ": sample after the run; not the CUPTI clock?";
    }
  }
  for (const char* m : {core::counter::kPmSmActivePct, core::counter::kPmSmIssuePct}) {
    std::vector<double> busy, idle;
    split(m, &busy, &idle);
    // 1 ms samples over ~400 ms of loop: at least a hundred, or the stamps are not where the loop was.
    ASSERT_GE(busy.size(), 100u) << m << ": few samples inside the busy loop; PM stamps off the CUPTI clock?";
    ASSERT_GE(idle.size(), 100u) << m;
    EXPECT_GT(Median(busy), 50.0) << m << " during the busy loop";
    EXPECT_LT(Median(idle), 5.0) << m << " while idle";
  }

  // NVML: power read, and every reading stamped within the run.
  for (const char* n : {core::counter::kPowerWatts, core::counter::kTemperatureCelsius, core::counter::kSmClockMhz,
                        core::counter::kMemoryClockMhz, core::counter::kMemoryUsedBytes,
                        core::counter::kClocksEventReasons}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n << " missing from counters()";
    EXPECT_FALSE(got.nvml[n].empty()) << "no readings of " << n;
    for (const Point& p : got.nvml[n]) {
      EXPECT_EQ(p.start, p.end) << n;
      EXPECT_GE(p.start, t_start) << n;
      EXPECT_LE(p.start, t_stop) << n;
    }
  }
  double max_power = 0;
  for (const Point& p : got.nvml[core::counter::kPowerWatts]) max_power = std::max(max_power, p.value);
  EXPECT_GT(max_power, 0.0);
  std::printf("NVML: %zu power readings, max %.1f W\n", got.nvml[core::counter::kPowerWatts].size(), max_power);

  // The counters are free again: the Range Profiler starts on this context.
  auto init = cupti::Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  ASSERT_EQ(cuptiProfilerInitialize(&init), CUPTI_SUCCESS);
  auto enable = cupti::Params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = ctx;
  const CUptiResult enabled = cuptiRangeProfilerEnable(&enable);
  const char* text = nullptr;
  cuptiGetResultString(enabled, &text);
  ASSERT_EQ(enabled, CUPTI_SUCCESS) << "cuptiRangeProfilerEnable after the sampler stopped: " << (text ? text : "?");
  auto disable = cupti::Params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
  disable.pRangeProfilerObject = enable.pRangeProfilerObject;
  EXPECT_EQ(cuptiRangeProfilerDisable(&disable), CUPTI_SUCCESS);
}

TEST_F(GpuCountersGpuTest, DefaultCountersThisDeviceSamples) {
  std::string error;
  ASSERT_TRUE(InitGpuForCounters(0, &error)) << error;
  cupti::PmSamplerOptions options;
  options.device = 0;
  auto sampler = cupti::PmSampler::Create(cupti::RealCuptiApi(), options);
  if (!sampler.ok() && absl::IsPermissionDenied(sampler.status())) GTEST_SKIP() << sampler.status();
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  const cupti::PmSamplingConfig& c = (*sampler)->config();
  std::printf("chip %s: %zu of %zu default counters; hardware buffer %zu MiB; left out: %s\n", c.chip.c_str(),
              c.metrics.size(), cupti::DefaultPmSamplingMetrics().size(), (*sampler)->hardware_buffer_bytes() >> 20,
              cupti::DescribeLeftOut(c).c_str());
  for (const std::string& m : cupti::DefaultPmSamplingMetrics()) {
    if (m == core::counter::kPmNvlinkRxBytesPerSecond || m == core::counter::kPmNvlinkTxBytesPerSecond) continue;
    EXPECT_NE(std::find(c.metrics.begin(), c.metrics.end(), m), c.metrics.end()) << m;
  }
  ASSERT_TRUE((*sampler)->Start().ok());
  SleepMs(50);
  auto rest = (*sampler)->Finish();
  ASSERT_TRUE(rest.ok()) << rest.status();
  std::printf("50 ms: %zu samples, %llu stale dropped\n", (*rest)[0].size(),
              static_cast<unsigned long long>((*sampler)->stale()));
  EXPECT_GT((*rest)[0].size(), 10u);
}

TEST_F(GpuCountersGpuTest, AMetricTheChipLacksIsNamedOnceAndTheRestAreSampled) {
  std::string error;
  ASSERT_TRUE(InitGpuForCounters(0, &error)) << error;
  std::mutex mu;
  std::vector<std::string> warnings;
  std::map<std::string, size_t> points;
  GpuCounterSamplerOptions options;
  options.devices = {0};
  options.nvml = false;
  options.pm_metrics = {core::counter::kPmSmActivePct, "smsp__no_such_counter.sum"};
  GpuCounterSampler sampler(
      cupti::RealCuptiApi(), options,
      [&](std::vector<CounterBatch> batches) {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& b : batches) points[b.name] += b.points.size();
      },
      [&](const std::string& line) {
        std::lock_guard<std::mutex> lock(mu);
        warnings.push_back(line);
      });
  const absl::Status started = sampler.Start();
  if (absl::IsPermissionDenied(started)) GTEST_SKIP() << started;
  ASSERT_TRUE(started.ok()) << started;
  SleepMs(300);
  sampler.Stop();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("smsp__no_such_counter.sum"), std::string::npos) << warnings[0];
  EXPECT_EQ(sampler.counters(), std::vector<std::string>{core::counter::kPmSmActivePct});
  EXPECT_GT(points[core::counter::kPmSmActivePct], 100u);  // ~300 samples at 1 ms
  EXPECT_EQ(points.count("smsp__no_such_counter.sum"), 0u);
}

TEST_F(GpuCountersGpuTest, WhileSamplingTheCountersAreTakenAndFinishFreesThem) {
  std::string error;
  ASSERT_TRUE(InitGpuForCounters(0, &error)) << error;
  const CUcontext ctx = CurrentContext();
  ASSERT_NE(ctx, nullptr);
  cupti::PmSamplerOptions options;
  options.device = 0;
  auto first = cupti::PmSampler::Create(cupti::RealCuptiApi(), options);
  if (!first.ok() && absl::IsPermissionDenied(first.status())) GTEST_SKIP() << first.status();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->Start().ok());
  SleepMs(50);
  auto before = (*first)->Drain();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT((*before)[0].size(), 10u);  // ~50 at 1 ms
  // A second session on the same device is refused, with a message that says why.
  auto second = cupti::PmSampler::Create(cupti::RealCuptiApi(), options);
  ASSERT_FALSE(second.ok());
  std::printf("second PM sampler while one runs: %s\n", std::string(second.status().message()).c_str());
  // For the record: whether the Range Profiler can start meanwhile.
  auto init = cupti::Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  ASSERT_EQ(cuptiProfilerInitialize(&init), CUPTI_SUCCESS);
  auto enable = cupti::Params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = ctx;
  const CUptiResult during = cuptiRangeProfilerEnable(&enable);
  const char* text = nullptr;
  cuptiGetResultString(during, &text);
  std::printf("cuptiRangeProfilerEnable while PM sampling runs: %s\n", text ? text : "?");
  if (during == CUPTI_SUCCESS) {
    auto disable = cupti::Params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = enable.pRangeProfilerObject;
    cuptiRangeProfilerDisable(&disable);
  }
  SleepMs(50);
  auto rest = (*first)->Finish();
  ASSERT_TRUE(rest.ok()) << rest.status();
  // For the record: whether PM sampling survived the Range Profiler's enable and disable.
  std::printf("PM samples in the 50 ms after the Range Profiler was enabled and disabled: %zu\n", (*rest)[0].size());
  EXPECT_TRUE((*first)->Finish().ok());  // idempotent
  auto again = cupti::PmSampler::Create(cupti::RealCuptiApi(), options);
  EXPECT_TRUE(again.ok()) << again.status();
}

// Prepared ahead, sampling begins at Start within milliseconds: the set-up cost is paid before the
// window. A sampler prepared and then stopped without starting gives the counters back.
TEST_F(GpuCountersGpuTest, APreparedSamplerStartsAtOnceAndAnUnstartedOneFreesTheCounters) {
  std::string error;
  ASSERT_TRUE(InitGpuForCounters(0, &error)) << error;
  GpuCounterSamplerOptions options;
  options.devices = {0};
  std::mutex mu;
  std::vector<Point> sm_active;
  const auto emit = [&](std::vector<CounterBatch> batches) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& b : batches) {
      if (b.name == core::counter::kPmSmActivePct) sm_active.insert(sm_active.end(), b.points.begin(), b.points.end());
    }
  };
  const auto warn = [](const std::string& line) { std::fprintf(stderr, "cuscope: %s\n", line.c_str()); };
  {
    GpuCounterSampler unstarted(cupti::RealCuptiApi(), options, emit, warn);
    const absl::Status prepared = unstarted.Prepare();
    if (absl::IsPermissionDenied(prepared)) GTEST_SKIP() << prepared;
    ASSERT_TRUE(prepared.ok()) << prepared;
    EXPECT_FALSE(unstarted.Prepare().ok());  // once
    unstarted.Stop();
  }
  GpuCounterSampler sampler(cupti::RealCuptiApi(), options, emit, warn);
  const uint64_t t0 = Now();
  ASSERT_TRUE(sampler.Prepare().ok());  // the counters were given back by the unstarted one
  const uint64_t t1 = Now();
  ASSERT_TRUE(sampler.Start().ok());
  const uint64_t t2 = Now();
  SleepMs(300);
  sampler.Stop();
  std::printf("Prepare %.1f ms, Start %.1f ms\n", (t1 - t0) / 1e6, (t2 - t1) / 1e6);
  EXPECT_LT(t2 - t1, 50 * kMs);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(sm_active.empty());
  // The first sample within a few intervals of Start, none from before it.
  EXPECT_GE(sm_active.front().start + kMs, t1);
  EXPECT_LT(sm_active.front().start, t2 + 20 * kMs);
  EXPECT_GT(sm_active.size(), 200u);  // ~300 at 1 ms
}

TEST_F(GpuCountersGpuTest, OverflowIsCountedAndSamplingGoesOnAfterADrain) {
  std::string error;
  ASSERT_TRUE(InitGpuForCounters(0, &error)) << error;
  cupti::PmSamplerOptions options;
  options.device = 0;
  options.interval_ns = 20'000;  // 50 kHz, about 0.5 GB/s of records: the capped buffer fills in ~0.5 s
  auto s = cupti::PmSampler::Create(cupti::RealCuptiApi(), options);
  if (!s.ok() && absl::IsPermissionDenied(s.status())) GTEST_SKIP() << s.status();
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->Start().ok());
  SleepMs(2000);  // no drain meanwhile
  const auto t0 = std::chrono::steady_clock::now();
  auto first = (*s)->Drain();
  const double drain_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(first.ok()) << first.status();
  const size_t kept = (*first)[0].size();
  std::printf("50 kHz, 2 s undrained, %zu MiB buffer: %zu samples kept (%.2f s of them), %llu overflows, drain %.2f s\n",
              (*s)->hardware_buffer_bytes() >> 20, kept,
              kept ? ((*first)[0].back().end - (*first)[0].front().start) / 1e9 : 0.0,
              static_cast<unsigned long long>((*s)->overflows()), drain_s);
  EXPECT_GE((*s)->overflows(), 1u);
  const uint64_t overflows = (*s)->overflows();
  // The drain restarted sampling: 100 ms later (well inside the buffer at 50 kHz) the samples of
  // those 100 ms arrive, stamped after the restart, and the buffer no longer reads as overflowed.
  const uint64_t restarted = Now();
  SleepMs(100);
  auto rest = (*s)->Finish();
  ASSERT_TRUE(rest.ok()) << rest.status();
  const auto& after = (*rest)[0];
  std::printf("after the restart: %zu samples, %llu overflows in all, %llu stale samples dropped\n", after.size(),
              static_cast<unsigned long long>((*s)->overflows()), static_cast<unsigned long long>((*s)->stale()));
  EXPECT_GT(after.size(), 1000u);  // ~5000 in 100 ms at 50 kHz
  EXPECT_EQ((*s)->overflows(), overflows);
  for (const Point& p : after) ASSERT_GE(p.end, restarted - 50 * kMs);
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST_F(GpuCountersGpuTest, NsysRateKeepsUpWithoutOverflowAndItsCostIsPrinted) {
  std::string error;
  ASSERT_TRUE(InitGpuForCounters(0, &error)) << error;
  std::mutex mu;
  size_t pm_points = 0;
  GpuCounterSamplerOptions options;
  options.devices = {0};
  options.interval_ns = 100'000;  // nsys's 10 kHz
  options.nvml = false;
  GpuCounterSampler sampler(
      cupti::RealCuptiApi(), options,
      [&](std::vector<CounterBatch> batches) {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& b : batches) {
          if (b.name == core::counter::kPmSmActivePct) pm_points += b.points.size();
        }
      },
      [](const std::string& line) { std::fprintf(stderr, "cuscope: %s\n", line.c_str()); });
  const absl::Status started = sampler.Start();
  if (absl::IsPermissionDenied(started)) GTEST_SKIP() << started;
  ASSERT_TRUE(started.ok()) << started;
  // The process does nothing else meanwhile: its CPU time is the sampler thread's (samples come at
  // the same rate whether the GPU works or not).
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  SleepMs(1000);
  const double cpu = ProcessCpuSeconds() - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sampler.Stop();
  std::lock_guard<std::mutex> lock(mu);
  std::printf("10 kHz, 11 counters: %zu samples, %llu overflows, sampler thread %.1f%% of a core\n", pm_points,
              static_cast<unsigned long long>(sampler.overflows()), 100.0 * cpu / wall);
  EXPECT_EQ(sampler.overflows(), 0u);
  EXPECT_GE(pm_points, 5000u);
  EXPECT_LE(pm_points, 20000u);
}

}  // namespace
}  // namespace cuscope::testing
