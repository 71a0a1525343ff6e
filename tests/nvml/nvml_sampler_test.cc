// NVML readings through a fake table: the names and units a trace gets, how devices are found, and
// how a missing entry point or a failing reading shows (one message, the rest still read).
#include "lib/nvml/nvml_sampler.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/counter_names.h"
#include "tests/nvml/nvml_fake.h"

namespace cuscope::nvml {
namespace {

using testing::Fake;
using testing::FakeFunctions;
using testing::FakeGpu;

constexpr char kUuid0[] = "GPU-8c3f2a11-0d5e-7b2c-91aa-3e4f5a6b7c8d";
constexpr char kUuid1[] = "GPU-11111111-2222-3333-4444-555555555555";

FakeGpu H200(const std::string& uuid, const std::string& pci) {
  FakeGpu g;
  g.uuid = uuid;
  g.pci = pci;
  g.milliwatts = 412345;
  g.celsius = 61;
  g.sm_mhz = 1980;
  g.mem_mhz = 2619;
  g.used_bytes = 80ull << 30;
  g.reasons = core::counter::kReasonGpuIdle | core::counter::kReasonSwPowerCap;
  return g;
}

class NvmlSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Fake() = testing::FakeNvml{};
    Fake().gpus = {H200(kUuid0, "00000000:3b:00.0"), H200(kUuid1, "00000000:5d:00.0")};
  }
  NvmlSampler::Warn Collect() {
    return [this](const std::string& m) { warnings_.push_back(m); };
  }
  std::vector<std::string> warnings_;
};

std::map<std::string, double> AsMap(const std::vector<NvmlValue>& values) {
  std::map<std::string, double> m;
  for (const auto& v : values) m[v.name] = v.value;
  return m;
}

DeviceIdentity Id(uint32_t device, std::string uuid, uint32_t bus) {
  DeviceIdentity id;
  id.device = device;
  id.uuid = std::move(uuid);
  id.pci_bus_id = bus;
  return id;
}

TEST_F(NvmlSamplerTest, OneReadingGivesEveryCounterByNameInTraceUnits) {
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(0, kUuid0, 0x3b)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->devices(), std::vector<uint32_t>{0});
  const auto values = AsMap(s->Read(0));
  const std::map<std::string, double> want = {
      {core::counter::kPowerWatts, 412.345},
      {core::counter::kTemperatureCelsius, 61},
      {core::counter::kSmClockMhz, 1980},
      {core::counter::kMemoryClockMhz, 2619},
      {core::counter::kMemoryUsedBytes, static_cast<double>(80ull << 30)},
      {core::counter::kClocksEventReasons,
       static_cast<double>(core::counter::kReasonGpuIdle | core::counter::kReasonSwPowerCap)},
  };
  EXPECT_EQ(values, want);
  EXPECT_EQ(s->counters().size(), want.size());
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_F(NvmlSamplerTest, DevicesAreFoundByUuidElseByPciAddressNotByOrdinal) {
  // CUDA device 0 is NVML's second GPU (CUDA_VISIBLE_DEVICES reorders); device 1 has no UUID.
  Fake().gpus[1].milliwatts = 99000;
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(0, kUuid1, 0x5d), Id(1, "", 0x3b)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->devices(), (std::vector<uint32_t>{0, 1}));
  EXPECT_DOUBLE_EQ(AsMap(s->Read(0))[core::counter::kPowerWatts], 99.0);
  EXPECT_DOUBLE_EQ(AsMap(s->Read(1))[core::counter::kPowerWatts], 412.345);
  EXPECT_EQ(Fake().uuid_lookups, std::vector<std::string>{kUuid1});
  EXPECT_EQ(Fake().pci_lookups, std::vector<std::string>{"00000000:3b:00.0"});
}

TEST_F(NvmlSamplerTest, UnknownUuidFallsBackToThePciAddress) {
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(0, "GPU-not-known-to-nvml", 0x5d)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Fake().pci_lookups, std::vector<std::string>{"00000000:5d:00.0"});
  EXPECT_FALSE(s->Read(0).empty());
}

TEST_F(NvmlSamplerTest, MissingEntryPointSkipsThatReadingWithOneMessage) {
  NvmlFunctions f = FakeFunctions();
  f.power_usage = nullptr;
  auto s = NvmlSampler::Create(f, {Id(0, kUuid0, 0x3b), Id(1, kUuid1, 0x5d)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < s->devices().size(); ++i) {
      const auto values = AsMap(s->Read(i));
      EXPECT_EQ(values.count(core::counter::kPowerWatts), 0u);
      EXPECT_EQ(values.size(), 5u);
      EXPECT_DOUBLE_EQ(values.at(core::counter::kSmClockMhz), 1980);
    }
  }
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("nvmlDeviceGetPowerUsage"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find(core::counter::kPowerWatts), std::string::npos) << warnings_[0];
  const auto names = s->counters();
  EXPECT_EQ(std::count(names.begin(), names.end(), core::counter::kPowerWatts), 0);
  EXPECT_EQ(names.size(), 5u);
}

TEST_F(NvmlSamplerTest, UnsupportedReadingIsReportedOnceAndNotAskedAgain) {
  Fake().gpus[0].temperature_result = kNvmlErrorNotSupported;
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(0, kUuid0, 0x3b), Id(1, kUuid1, 0x5d)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(AsMap(s->Read(0)).count(core::counter::kTemperatureCelsius), 0u);
    EXPECT_EQ(AsMap(s->Read(1)).count(core::counter::kTemperatureCelsius), 1u);
  }
  // Device 0 asked once, device 1 every round.
  EXPECT_EQ(Fake().temperature_calls, 1 + 3);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("device 0"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("Not Supported"), std::string::npos) << warnings_[0];
  // Still read on device 1: still a counter of the trace.
  const auto names = s->counters();
  EXPECT_EQ(std::count(names.begin(), names.end(), core::counter::kTemperatureCelsius), 1);
}

TEST_F(NvmlSamplerTest, PassingFailureIsReportedOnceAndRetried) {
  Fake().gpus[0].power_result = kNvmlErrorUnknown;
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(0, kUuid0, 0x3b)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(AsMap(s->Read(0)).count(core::counter::kPowerWatts), 0u);
  EXPECT_EQ(AsMap(s->Read(0)).count(core::counter::kPowerWatts), 0u);
  Fake().gpus[0].power_result = kNvmlSuccess;
  EXPECT_DOUBLE_EQ(AsMap(s->Read(0))[core::counter::kPowerWatts], 412.345);
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(NvmlSamplerTest, LostGpuStopsThatDeviceWithOneMessage) {
  Fake().gpus[0].reasons_result = kNvmlErrorGpuIsLost;
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(0, kUuid0, 0x3b), Id(1, kUuid1, 0x5d)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  s->Read(0);
  EXPECT_TRUE(s->Read(0).empty());
  EXPECT_EQ(s->Read(1).size(), 6u);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("lost device 0"), std::string::npos) << warnings_[0];
}

TEST_F(NvmlSamplerTest, DeviceNvmlDoesNotKnowIsNamedAndTheOthersAreRead) {
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(0, kUuid0, 0x3b), Id(3, "GPU-gone", 0x99)}, Collect());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->devices(), std::vector<uint32_t>{0});
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("device 3"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("GPU-gone"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("00000000:99:00.0"), std::string::npos) << warnings_[0];
}

TEST_F(NvmlSamplerTest, NoDeviceFoundIsAnErrorNamingIt) {
  auto s = NvmlSampler::Create(FakeFunctions(), {Id(2, "GPU-gone", 0x99)}, Collect());
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsNotFound(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("device 2"), std::string::npos) << s.status();
  auto none = NvmlSampler::Create(FakeFunctions(), {}, Collect());
  EXPECT_FALSE(none.ok());
  // The error is the one message: nothing was warned besides.
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

}  // namespace
}  // namespace cuscope::nvml
