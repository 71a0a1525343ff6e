#include "lib/core/config.h"

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

TEST(ConfigTest, DefaultsWithoutVariables) {
  auto c = ParseConfigFromEnvironment({{"PATH", "/usr/bin"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->buffer_bytes, 4u << 20);
  EXPECT_EQ(c->buffer_pool_cap_bytes, 128u << 20);
  EXPECT_EQ(c->flush_period_ms, 500u);
  EXPECT_TRUE(c->kind_enabled("kernel"));
  EXPECT_TRUE(c->kind_enabled("nvtx"));
  EXPECT_TRUE(c->settings.empty());
}

TEST(ConfigTest, ReadsEverySetting) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_OUTPUT", "run_%p"},
                                       {"CUSCOPE_FORCE_OVERWRITE", "yes"},
                                       {"CUSCOPE_KINDS", "kernel,memcpy"},
                                       {"CUSCOPE_BUFFER_SIZE", "1M"},
                                       {"CUSCOPE_BUFFER_POOL_CAP", "16M"},
                                       {"CUSCOPE_FLUSH_PERIOD_MS", "250"},
                                       {"CUSCOPE_DELAY", "1.5"},
                                       {"CUSCOPE_DURATION", "3"},
                                       {"CUSCOPE_CAPTURE_RANGE", "cudaProfilerApi"},
                                       {"CUSCOPE_QUIET", "1"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->output, "run_%p");
  EXPECT_TRUE(c->force_overwrite);
  EXPECT_EQ(c->activity_kinds, (std::vector<std::string>{"kernel", "memcpy"}));
  EXPECT_FALSE(c->kind_enabled("runtime"));
  EXPECT_EQ(c->buffer_bytes, 1u << 20);
  EXPECT_EQ(c->buffer_pool_cap_bytes, 16u << 20);
  EXPECT_EQ(c->flush_period_ms, 250u);
  EXPECT_DOUBLE_EQ(c->delay_seconds, 1.5);
  EXPECT_DOUBLE_EQ(c->duration_seconds, 3);
  EXPECT_EQ(c->capture_range, "cudaProfilerApi");
  EXPECT_TRUE(c->quiet);
  EXPECT_EQ(c->settings.size(), 10u);
}

TEST(ConfigTest, UnknownVariableIsNamed) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_OUTPTU", "x"}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("CUSCOPE_OUTPTU"), std::string::npos);
}

TEST(ConfigTest, TheCommandsLibraryVariableIsAccepted) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_LIBRARY", "/opt/cuscope/lib/libcuscope.so"}});
  EXPECT_TRUE(c.ok()) << c.status();
}

TEST(ConfigTest, BadValuesAreNamed) {
  const Env bad[] = {{{"CUSCOPE_BUFFER_SIZE", "lots"}},     {{"CUSCOPE_BUFFER_SIZE", "1K"}},
                     {{"CUSCOPE_KINDS", "kernel,gpu"}},     {{"CUSCOPE_DELAY", "-1"}},
                     {{"CUSCOPE_FLUSH_PERIOD_MS", "0"}},    {{"CUSCOPE_CAPTURE_RANGE", "nvtx"}},
                     {{"CUSCOPE_FORCE_OVERWRITE", "maybe"}}, {{"CUSCOPE_OUTPUT", ""}}};
  for (const auto& env : bad) {
    auto c = ParseConfigFromEnvironment(env);
    ASSERT_FALSE(c.ok()) << env[0].first << "=" << env[0].second;
    EXPECT_NE(std::string(c.status().message()).find(env[0].first), std::string::npos) << c.status();
  }
}

TEST(ConfigTest, CapSmallerThanOneBufferIsRefused) {
  auto c = ParseConfigFromEnvironment({{"CUSCOPE_BUFFER_SIZE", "8M"}, {"CUSCOPE_BUFFER_POOL_CAP", "4M"}});
  EXPECT_FALSE(c.ok());
}

TEST(ConfigTest, AllExpandsToEveryKind) {
  auto k = ParseActivityKinds("all");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->size(), std::size(kActivityKindNames));
}

}  // namespace
}  // namespace cuscope::core
