// GpuCounterSampler's own thread, run on a CPU: PM sampling switched off, NVML faked. What the
// collector gets (batches of named series on the CUPTI clock, at the drain period and at Stop), and
// how Start and Stop behave.
#include <cupti.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/counter_names.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/gpu_counter_sampler.h"
#include "tests/nvml/nvml_fake.h"

namespace cuscope::cupti {
namespace {

using nvml::testing::Fake;
using nvml::testing::FakeGpu;

constexpr char kUuid[] = "GPU-8c3f2a11-0d5e-7b2c-91aa-3e4f5a6b7c8d";

uint64_t Now() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

struct Got {
  std::mutex mu;
  int emits = 0;
  std::vector<CounterBatch> batches;
  std::vector<std::string> warnings;
};

class GpuCounterSamplerNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Fake() = nvml::testing::FakeNvml{};
    FakeGpu g;
    g.uuid = kUuid;
    g.pci = "00000000:3b:00.0";
    g.milliwatts = 412345;
    g.celsius = 61;
    g.sm_mhz = 1980;
    g.mem_mhz = 2619;
    g.used_bytes = 80ull << 30;
    Fake().gpus = {g};
  }

  // NVML only, on device 3 as the trace header describes it.
  GpuCounterSamplerOptions Options(bool nvml_loadable = true) {
    GpuCounterSamplerOptions o;
    o.pm_sampling = false;
    o.nvml_period_ns = 10'000'000;
    v1::Device d;
    d.set_id(3);
    d.set_uuid(kUuid);
    d.set_pci_bus_id(0x3b);
    o.device_info = {d};
    if (nvml_loadable) {
      o.nvml_loader = []() -> absl::StatusOr<nvml::NvmlSymbolLookup> { return nvml::testing::FakeLookup(); };
    } else {
      o.nvml_loader = []() -> absl::StatusOr<nvml::NvmlSymbolLookup> {
        return absl::UnavailableError("NVML is not available (libnvidia-ml.so.1 not found)");
      };
    }
    return o;
  }

  GpuCounterSampler::Emit Emit() {
    return [this](std::vector<CounterBatch> b) {
      std::lock_guard<std::mutex> lock(got_.mu);
      ++got_.emits;
      for (auto& x : b) got_.batches.push_back(std::move(x));
    };
  }
  GpuCounterSampler::Warn Warn() {
    return [this](const std::string& m) {
      std::lock_guard<std::mutex> lock(got_.mu);
      got_.warnings.push_back(m);
    };
  }
  Got got_;
};

TEST_F(GpuCounterSamplerNvmlTest, EmitsNamedSeriesOnTheCuptiClockUntilStop) {
  GpuCounterSampler s(RealCuptiApi(), Options(), Emit(), Warn());
  const uint64_t t0 = Now();
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  s.Stop();
  const uint64_t t1 = Now();

  std::lock_guard<std::mutex> lock(got_.mu);
  EXPECT_TRUE(got_.warnings.empty()) << got_.warnings.front();
  // Batches come every drain period (100 ms) and at Stop, not with every reading. Bounds from the
  // time the run really took, so a loaded machine does not fail this.
  const uint64_t run_ms = (t1 - t0) / 1'000'000;
  EXPECT_GE(got_.emits, 2);
  EXPECT_LE(got_.emits, static_cast<int>(run_ms / 100 + 2));
  std::map<std::string, std::vector<core::ChunkBuilder::CounterPoint>> series;
  for (const auto& b : got_.batches) {
    EXPECT_EQ(b.device, 3u);
    EXPECT_EQ(b.source, v1::COUNTER_SOURCE_NVML);
    auto& s_points = series[b.name];
    s_points.insert(s_points.end(), b.points.begin(), b.points.end());
  }
  ASSERT_EQ(series.size(), 6u);
  const auto& power = series[core::counter::kPowerWatts];
  // One reading per 10 ms (never a burst to catch up), plus the one at Stop.
  EXPECT_GE(power.size(), 10u);
  EXPECT_LE(power.size(), run_ms / 10 + 2);
  uint64_t previous = 0;
  for (const auto& p : power) {
    EXPECT_DOUBLE_EQ(p.value, 412.345);
    EXPECT_EQ(p.start, p.end);  // instantaneous
    EXPECT_GE(p.start, t0);
    EXPECT_LE(p.start, t1);
    EXPECT_GT(p.start, previous);  // in time order across batches
    previous = p.start;
  }
  EXPECT_EQ(series[core::counter::kMemoryUsedBytes].back().value, static_cast<double>(80ull << 30));
  // Every reading of the device counts once.
  EXPECT_EQ(s.samples(), power.size());
  EXPECT_EQ(s.overflows(), 0u);
  EXPECT_EQ(s.counters().size(), 6u);
}

TEST_F(GpuCounterSamplerNvmlTest, StopIsIdempotentAndNothingComesAfterIt) {
  GpuCounterSampler s(RealCuptiApi(), Options(), Emit(), Warn());
  ASSERT_TRUE(s.Start().ok());
  s.Stop();
  int emits = 0;
  {
    std::lock_guard<std::mutex> lock(got_.mu);
    emits = got_.emits;
  }
  EXPECT_GE(emits, 1);  // the reading at Stop
  s.Stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  std::lock_guard<std::mutex> lock(got_.mu);
  EXPECT_EQ(got_.emits, emits);
}

TEST_F(GpuCounterSamplerNvmlTest, NothingToRunIsAnErrorNamingWhyAndWarnsNothing) {
  GpuCounterSampler s(RealCuptiApi(), Options(/*nvml_loadable=*/false), Emit(), Warn());
  const absl::Status st = s.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("libnvidia-ml.so.1"), std::string::npos) << st;
  s.Stop();
  std::lock_guard<std::mutex> lock(got_.mu);
  EXPECT_TRUE(got_.warnings.empty()) << got_.warnings.front();
  EXPECT_EQ(got_.emits, 0);
}

TEST_F(GpuCounterSamplerNvmlTest, StartingTwiceOrAfterStopIsRefused) {
  GpuCounterSampler s(RealCuptiApi(), Options(), Emit(), Warn());
  ASSERT_TRUE(s.Start().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(s.Start()));
  s.Stop();
  GpuCounterSampler stopped(RealCuptiApi(), Options(), Emit(), Warn());
  stopped.Stop();
  EXPECT_TRUE(absl::IsFailedPrecondition(stopped.Start()));
}

TEST_F(GpuCounterSamplerNvmlTest, AReadingNvmlLacksIsNamedOnceAndTheRestFlow) {
  GpuCounterSamplerOptions o = Options();
  o.nvml_loader = []() -> absl::StatusOr<nvml::NvmlSymbolLookup> {
    return nvml::testing::FakeLookup({"nvmlDeviceGetPowerUsage"});
  };
  GpuCounterSampler s(RealCuptiApi(), o, Emit(), Warn());
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  s.Stop();
  std::lock_guard<std::mutex> lock(got_.mu);
  ASSERT_EQ(got_.warnings.size(), 1u);
  EXPECT_NE(got_.warnings[0].find(core::counter::kPowerWatts), std::string::npos) << got_.warnings[0];
  EXPECT_EQ(s.counters().size(), 5u);
  for (const auto& b : got_.batches) EXPECT_NE(b.name, core::counter::kPowerWatts);
  EXPECT_FALSE(got_.batches.empty());
}

TEST_F(GpuCounterSamplerNvmlTest, PmSamplingRefusedForOneReasonOnManyDevicesIsOneLine) {
  // Device ids no machine has: PM sampling fails on both for the same reason, here or on a GPU
  // machine alike, while NVML (faked) runs.
  GpuCounterSamplerOptions o = Options();
  o.pm_sampling = true;
  o.device_info.clear();
  for (uint32_t id : {1000u, 1001u}) {
    v1::Device d;
    d.set_id(id);
    d.set_uuid(kUuid);
    o.device_info.push_back(d);
  }
  GpuCounterSampler s(RealCuptiApi(), o, Emit(), Warn());
  ASSERT_TRUE(s.Start().ok());
  s.Stop();
  std::lock_guard<std::mutex> lock(got_.mu);
  ASSERT_EQ(got_.warnings.size(), 1u) << got_.warnings.front();
  std::printf("%s\n", got_.warnings[0].c_str());
  EXPECT_NE(got_.warnings[0].find("PM sampling on devices 1000, 1001: "), std::string::npos) << got_.warnings[0];
  EXPECT_EQ(s.counters().size(), 6u);  // NVML's only
}

}  // namespace
}  // namespace cuscope::cupti
