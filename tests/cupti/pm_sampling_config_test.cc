// PM sampling configurations built offline for the H100/H200 chip (GH100): CUPTI's host API needs
// the chip's name, not a device, so these run on machines without a GPU.
//
// Evaluation of real samples is not covered here: a PM sampling counter-data image can only be
// sized and initialized through an enabled sampling object (cuptiPmSamplingGetCounterDataSize
// without one returns CUPTI_ERROR_INVALID_PARAMETER), and a fabricated image crashes inside
// libnvperf_host. tests/gpu/gpu_counters_gpu_test.cc evaluates real samples on a GPU.
#include "lib/cupti/pm_sampling_config.h"

#include <cupti_profiler_host.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/counter_names.h"
#include "lib/cupti/cupti_params.h"
#include "lib/cupti/pm_sampler.h"
#include "lib/cupti/profiler_api.h"

namespace cuscope::cupti {
namespace {

constexpr char kChip[] = "GH100";
// The Range Profiler's SM throughput: 19 passes of PM sampling counters on GH100.
constexpr char kSmThroughput[] = "sm__throughput.avg.pct_of_peak_sustained_elapsed";

// Passes the config image needs, asked from CUPTI directly rather than trusting the builder.
size_t Passes(std::vector<uint8_t> image) {
  auto p = Params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  if (cuptiProfilerHostGetNumOfPasses(&p) != CUPTI_SUCCESS) return 0;
  return p.numOfPasses;
}

bool Has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(PmSamplingConfigTest, DefaultCountersAllBuildOnGh100InOnePass) {
  const std::vector<std::string> defaults = DefaultPmSamplingMetrics();
  ASSERT_EQ(defaults.size(), 11u);
  const auto t0 = std::chrono::steady_clock::now();
  auto config = BuildPmSamplingConfig(RealProfilerApi(), kChip, {}, defaults);
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics, defaults);
  EXPECT_TRUE(config->unknown.empty()) << config->unknown.front();
  EXPECT_TRUE(config->over_one_pass.empty()) << config->over_one_pass.front();
  EXPECT_EQ(DescribeLeftOut(*config), "");
  EXPECT_EQ(Passes(config->config_image), 1u);
  // Printed for the record: what each device's set-up costs on the calling thread.
  std::printf("default PM sampling config: %zu metrics, %zu-byte image, built in %.1f ms\n", config->metrics.size(),
              config->config_image.size(), ms);
}

TEST(PmSamplingConfigTest, DefaultsCoverWhatNsysShowsOnHopper) {
  // nsys's Hopper rows: GR active, SM active, SM issue, warp occupancy, tensor active, DRAM read and
  // write bandwidth, PCIe and NVLink traffic.
  const std::vector<std::string> d = DefaultPmSamplingMetrics();
  for (const char* m : {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed",
                        "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
                        "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
                        "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
                        "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
                        "dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
                        "dram__write_throughput.avg.pct_of_peak_sustained_elapsed", "pcie__read_bytes.sum.per_second",
                        "pcie__write_bytes.sum.per_second", "nvlrx__bytes.sum.per_second",
                        "nvltx__bytes.sum.per_second"}) {
    EXPECT_TRUE(Has(d, m)) << m;
  }
  EXPECT_EQ(d.size(), 11u);
}

TEST(PmSamplingConfigTest, UnknownMetricIsNamedAndTheRestBuild) {
  const std::vector<std::string> asked = {core::counter::kPmSmActivePct, "smsp__no_such_counter.sum", core::counter::kPmDramReadPct};
  auto config = BuildPmSamplingConfig(RealProfilerApi(), kChip, {}, asked);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics, (std::vector<std::string>{core::counter::kPmSmActivePct, core::counter::kPmDramReadPct}));
  EXPECT_EQ(config->unknown, std::vector<std::string>{"smsp__no_such_counter.sum"});
  EXPECT_TRUE(config->over_one_pass.empty());
  EXPECT_EQ(Passes(config->config_image), 1u);
  const std::string said = DescribeLeftOut(*config);
  EXPECT_NE(said.find("smsp__no_such_counter.sum"), std::string::npos) << said;
  EXPECT_NE(said.find(kChip), std::string::npos) << said;
}

TEST(PmSamplingConfigTest, MetricThatNeedsSeveralPassesIsNamedAndTheRestBuild) {
  const std::vector<std::string> asked = {core::counter::kPmSmActivePct, kSmThroughput, core::counter::kPmDramWritePct};
  auto config = BuildPmSamplingConfig(RealProfilerApi(), kChip, {}, asked);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics, (std::vector<std::string>{core::counter::kPmSmActivePct, core::counter::kPmDramWritePct}));
  EXPECT_EQ(config->over_one_pass, std::vector<std::string>{kSmThroughput});
  EXPECT_TRUE(config->unknown.empty());
  EXPECT_EQ(Passes(config->config_image), 1u);
  const std::string said = DescribeLeftOut(*config);
  EXPECT_NE(said.find(kSmThroughput), std::string::npos) << said;
  EXPECT_NE(said.find("one pass"), std::string::npos) << said;
}

TEST(PmSamplingConfigTest, DuplicatesAreSampledOnce) {
  auto config = BuildPmSamplingConfig(RealProfilerApi(), kChip, {}, {core::counter::kPmSmActivePct, core::counter::kPmSmIssuePct, core::counter::kPmSmActivePct});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics, (std::vector<std::string>{core::counter::kPmSmActivePct, core::counter::kPmSmIssuePct}));
}

TEST(PmSamplingConfigTest, EmptyListIsAnError) {
  auto config = BuildPmSamplingConfig(RealProfilerApi(), kChip, {}, {});
  ASSERT_FALSE(config.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << config.status();
}

TEST(PmSamplingConfigTest, NothingLeftIsAnErrorNamingEveryMetric) {
  auto config = BuildPmSamplingConfig(RealProfilerApi(), kChip, {}, {"smsp__no_such_counter.sum", kSmThroughput});
  ASSERT_FALSE(config.ok());
  EXPECT_TRUE(absl::IsNotFound(config.status())) << config.status();
  EXPECT_NE(config.status().message().find("smsp__no_such_counter.sum"), std::string::npos) << config.status();
  EXPECT_NE(config.status().message().find(kSmThroughput), std::string::npos) << config.status();
}

TEST(PmSamplingConfigTest, UnknownChipIsAnErrorNamingIt) {
  auto config = BuildPmSamplingConfig(RealProfilerApi(), "NO_SUCH_CHIP", {}, DefaultPmSamplingMetrics());
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("NO_SUCH_CHIP"), std::string::npos) << config.status();
}

TEST(PmSamplingConfigTest, EvaluatorIsMadeForTheDefaultsAndRefusesWhatItCannotEvaluate) {
  auto evaluator = PmSamplingEvaluator::Create(RealProfilerApi(), kChip, {}, DefaultPmSamplingMetrics());
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  EXPECT_EQ((*evaluator)->metrics(), DefaultPmSamplingMetrics());
  auto values = (*evaluator)->Evaluate({}, 0);
  EXPECT_FALSE(values.ok());
  EXPECT_FALSE(PmSamplingEvaluator::Create(RealProfilerApi(), "NO_SUCH_CHIP", {}, DefaultPmSamplingMetrics()).ok());
  EXPECT_FALSE(PmSamplingEvaluator::Create(RealProfilerApi(), kChip, {}, {}).ok());
  EXPECT_FALSE(PmSamplingEvaluator::Create(RealProfilerApi(), kChip, {}, {"smsp__no_such_counter.sum"}).ok());
}

// The buffer sizes PmSampler asks for (pm_sampler.h): about a second of samples in the hardware
// buffer, bounded; two drain periods of samples in the decode image.
TEST(PmSamplingSizesTest, HardwareBufferHoldsAboutASecondWithinBounds) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_EQ(PmHardwareBufferBytes(1'000'000), 16 * kMiB);   // 1 kHz: 1000 x 16 KiB
  EXPECT_EQ(PmHardwareBufferBytes(100'000), 157 * kMiB);    // nsys's 10 kHz: 10000 x 16 KiB, MiB-rounded
  EXPECT_EQ(PmHardwareBufferBytes(10'000), 256 * kMiB);     // capped
  EXPECT_EQ(PmHardwareBufferBytes(100'000'000), 16 * kMiB);  // floor
  EXPECT_EQ(PmHardwareBufferBytes(0), 256 * kMiB);
  EXPECT_EQ(PmHardwareBufferBytes(1'000'000) % kMiB, 0u);
}

TEST(PmSamplingSizesTest, DecodeImageHoldsTwoDrainPeriods) {
  EXPECT_EQ(PmDecodeImageSamples(1'000'000, 100'000'000), 200u);
  EXPECT_EQ(PmDecodeImageSamples(100'000, 100'000'000), 2000u);
  EXPECT_EQ(PmDecodeImageSamples(10'000, 100'000'000), 4096u);
  EXPECT_EQ(PmDecodeImageSamples(50'000'000, 100'000'000), 64u);
}

}  // namespace
}  // namespace cuscope::cupti
