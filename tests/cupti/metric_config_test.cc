// Range Profiler configurations built offline for the H100/H200 chip (GH100): CUPTI's host API
// needs the chip's name, not a device, so these run on machines without a GPU.
#include "lib/cupti/metric_config.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/metric_sets.h"
#include "lib/cupti/profiler_api.h"

namespace cuscope::cupti {
namespace {

constexpr char kChip[] = "GH100";

TEST(MetricConfigTest, EverySetBuildsOnGh100WithAllItsMetrics) {
  for (const std::string& set : core::MetricSetNames()) {
    const std::vector<std::string> metrics = core::MetricSet(set);
    auto config = BuildMetricConfig(RealProfilerApi(), kChip, {}, metrics);
    ASSERT_TRUE(config.ok()) << set << ": " << config.status();
    EXPECT_EQ(config->metrics, metrics) << set;
    EXPECT_TRUE(config->rejected.empty()) << set << " rejected " << config->rejected.front();
    EXPECT_FALSE(config->config_image.empty()) << set;
    EXPECT_GE(config->passes, 1u) << set;
  }
}

TEST(MetricConfigTest, SpeedOfLightNeedsSeveralReplays) {
  // sm__throughput alone takes 8 passes on GH100 (measured on the H200 with the same CUPTI).
  auto sm = BuildMetricConfig(RealProfilerApi(), kChip, {}, {std::string(core::metric::kSmThroughputPct)});
  ASSERT_TRUE(sm.ok()) << sm.status();
  EXPECT_EQ(sm->passes, 8u);
  auto one = BuildMetricConfig(RealProfilerApi(), kChip, {}, {std::string(core::metric::kDuration)});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->passes, 1u);
  auto sol = BuildMetricConfig(RealProfilerApi(), kChip, {}, core::MetricSet("sol"));
  ASSERT_TRUE(sol.ok());
  EXPECT_GE(sol->passes, sm->passes);
}

TEST(MetricConfigTest, AMetricTheChipLacksIsNamedAndTheRestStillBuild) {
  const std::vector<std::string> asked = {std::string(core::metric::kDuration), "smsp__no_such_counter.sum",
                                          std::string(core::metric::kDramThroughputPct)};
  auto config = BuildMetricConfig(RealProfilerApi(), kChip, {}, asked);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rejected, (std::vector<std::string>{"smsp__no_such_counter.sum"}));
  EXPECT_EQ(config->metrics,
            (std::vector<std::string>{std::string(core::metric::kDuration), std::string(core::metric::kDramThroughputPct)}));
  EXPECT_FALSE(config->config_image.empty());
}

TEST(MetricConfigTest, NothingLeftIsAnErrorNamingTheMetrics) {
  auto config = BuildMetricConfig(RealProfilerApi(), kChip, {}, {"smsp__no_such_counter.sum", "dram__nothing.avg"});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("smsp__no_such_counter.sum"), std::string::npos) << config.status();
  EXPECT_NE(config.status().message().find("dram__nothing.avg"), std::string::npos) << config.status();
}

TEST(MetricConfigTest, UnknownChipIsAnErrorNamingIt) {
  auto config = BuildMetricConfig(RealProfilerApi(), "NO_SUCH_CHIP", {}, core::MetricSet("sol"));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("NO_SUCH_CHIP"), std::string::npos) << config.status();
}

TEST(MetricConfigTest, AllSetsTogetherFitOneConfiguration) {
  auto all = core::ExpandMetricList("sol,occupancy,stalls,roofline");
  ASSERT_TRUE(all.ok());
  auto config = BuildMetricConfig(RealProfilerApi(), kChip, {}, *all);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->metrics.size(), all->size());
  // Printed for the record: the replays each launch costs with everything on.
  std::printf("all sets: %zu metrics, %zu passes\n", config->metrics.size(), config->passes);
  for (const std::string& set : core::MetricSetNames()) {
    auto one = BuildMetricConfig(RealProfilerApi(), kChip, {}, core::MetricSet(set));
    ASSERT_TRUE(one.ok());
    EXPECT_LE(one->passes, config->passes) << set;
    std::printf("%s: %zu metrics, %zu passes\n", set.c_str(), one->metrics.size(), one->passes);
  }
}

}  // namespace
}  // namespace cuscope::cupti
