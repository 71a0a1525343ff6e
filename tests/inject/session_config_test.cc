// SessionOptions become the configuration the CUSCOPE_* settings would give: values exactly,
// defaults untouched, and the same refusals.
#include "lib/inject/session_config.h"

#include <gtest/gtest.h>

namespace cuscope::inject {
namespace {

TEST(SessionConfigTest, DefaultsAreTheConfigurationsDefaults) {
  auto c = ConfigFromSessionOptions(SessionOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  const settings::Config defaults;
  EXPECT_EQ(c->output, "cuscope_%p");
  EXPECT_EQ(c->activity_kinds, defaults.activity_kinds);
  EXPECT_EQ(c->buffer_bytes, defaults.buffer_bytes);
  EXPECT_EQ(c->kernel_selection.per_kernel_count, 1u);
  EXPECT_EQ(c->top_down_kernels, 0u);
  EXPECT_FALSE(c->gpu_metrics);
  EXPECT_EQ(c->settings.size(), 1u);  // CUSCOPE_OUTPUT only
}

TEST(SessionConfigTest, TheTopDownOnLiveTrafficWithExactTimes) {
  SessionOptions o;
  o.delay_seconds = 0.25;
  o.duration_seconds = 1234.5678;  // more digits than absl::StrCat keeps
  o.top_down = 4;
  o.top_down_launches = 2;
  o.gpu_metrics_frequency_hz = 500;
  auto c = ConfigFromSessionOptions(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->delay_seconds, 0.25);
  EXPECT_DOUBLE_EQ(c->duration_seconds, 1234.5678);
  EXPECT_EQ(c->top_down_kernels, 4u);
  EXPECT_EQ(c->top_down_launches, 2u);
  EXPECT_EQ(c->metrics_request, "sol,occupancy,stalls");
  EXPECT_TRUE(c->gpu_metrics);  // the whole method by default
  EXPECT_EQ(c->gpu_metrics_frequency_hz, 500u);
  EXPECT_EQ(c->settings.at("CUSCOPE_TOP_DOWN"), "4");

  o.gpu_metrics_devices = "none";
  auto without = ConfigFromSessionOptions(o);
  ASSERT_FALSE(without.ok());  // a rate without sampling
  o.gpu_metrics_frequency_hz = 0;
  without = ConfigFromSessionOptions(o);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE(without->gpu_metrics);
}

TEST(SessionConfigTest, RefusedAsTheEnvironmentWouldBe) {
  SessionOptions no_window;
  no_window.top_down = 1;
  auto c = ConfigFromSessionOptions(no_window);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("CUSCOPE_DURATION"), std::string::npos) << c.status();

  SessionOptions kinds;
  kinds.activity_kinds = {"kernel", "warp"};
  c = ConfigFromSessionOptions(kinds);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("warp"), std::string::npos) << c.status();

  SessionOptions selection_alone;
  selection_alone.kernel_name = "gemm";  // a selection with no metrics to collect
  EXPECT_FALSE(ConfigFromSessionOptions(selection_alone).ok());
  selection_alone.metrics = "sol";
  auto with_metrics = ConfigFromSessionOptions(selection_alone);
  ASSERT_TRUE(with_metrics.ok()) << with_metrics.status();
  EXPECT_EQ(with_metrics->kernel_selection.kernel_name, "gemm");
}

TEST(SessionConfigTest, FlightRecorderOptions) {
  SessionOptions o;
  o.mode = "flight";
  o.flight_span_seconds = 12.5;
  o.flight_size_mib = 64;
  o.flight_step_threshold_seconds = 0.2;
  o.flight_after_seconds = 1.5;
  auto c = ConfigFromSessionOptions(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, settings::CollectionMode::kFlight);
  EXPECT_EQ(c->flight_span_ms, 12'500u);
  EXPECT_EQ(c->flight_size_bytes, 64ull << 20);
  EXPECT_EQ(c->flight_step_threshold_ms, 200u);
  EXPECT_EQ(c->flight_after_ms, 1500u);
  // Left at 0: the defaults.
  SessionOptions d;
  d.mode = "flight";
  auto dc = ConfigFromSessionOptions(d);
  ASSERT_TRUE(dc.ok());
  EXPECT_EQ(dc->flight_span_ms, 30'000u);
  // A flight setting without flight mode is refused, as CUSCOPE_FLIGHT_SPAN alone would be.
  SessionOptions stray;
  stray.flight_span_seconds = 5;
  EXPECT_FALSE(ConfigFromSessionOptions(stray).ok());
}

}  // namespace
}  // namespace cuscope::inject
