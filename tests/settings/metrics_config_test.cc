// Kernel metrics and the launches they are collected on, as the environment sets them.
#include <string>

#include "gtest/gtest.h"
#include "lib/settings/config.h"

namespace cuscope::settings {
namespace {

TEST(MetricsConfigTest, EnvironmentSetsMetricsAndSelection) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_METRICS", "sol,occupancy"},
                                       {"CUSCOPE_KERNEL_NAME", "regex:gemm"},
                                       {"CUSCOPE_LAUNCH_SKIP", "5"},
                                       {"CUSCOPE_LAUNCH_COUNT", "10"},
                                       {"CUSCOPE_PER_KERNEL_COUNT", "0"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->metrics_request, "sol,occupancy");
  EXPECT_GT(c->metrics.size(), 8u);
  EXPECT_EQ(c->kernel_selection.kernel_name, "regex:gemm");
  EXPECT_EQ(c->kernel_selection.launch_skip, 5u);
  EXPECT_EQ(c->kernel_selection.launch_count, 10u);
  EXPECT_EQ(c->kernel_selection.per_kernel_count, 0u);
}

TEST(MetricsConfigTest, NoMetricsByDefault) {
  auto c = ParseConfigFromEnvironment({});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->metrics.empty());
  EXPECT_EQ(c->kernel_selection.per_kernel_count, 1u);
}

TEST(MetricsConfigTest, BadValuesAreNamed) {
  auto bad_set = ParseConfigFromEnvironment({{"CUSCOPE_METRICS", "sol,speed"}});
  ASSERT_FALSE(bad_set.ok());
  EXPECT_NE(bad_set.status().message().find("speed"), std::string::npos);
  auto bad_regex = ParseConfigFromEnvironment({{"CUSCOPE_METRICS", "sol"}, {"CUSCOPE_KERNEL_NAME", "regex:["}});
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_NE(bad_regex.status().message().find("CUSCOPE_KERNEL_NAME"), std::string::npos);
  auto bad_count = ParseConfigFromEnvironment({{"CUSCOPE_METRICS", "sol"}, {"CUSCOPE_LAUNCH_COUNT", "-1"}});
  ASSERT_FALSE(bad_count.ok());
  EXPECT_NE(bad_count.status().message().find("CUSCOPE_LAUNCH_COUNT"), std::string::npos);
}

TEST(MetricsConfigTest, SelectionWithoutMetricsIsRefused) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_LAUNCH_COUNT", "3"}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("needs CUSCOPE_METRICS"), std::string::npos);
}

}  // namespace
}  // namespace cuscope::settings
