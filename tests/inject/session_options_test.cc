// cuscope::SessionOptions go through the same checks as the CUSCOPE_* settings: a server that asks
// for the top-down in code is refused, or accepted, exactly as the environment would be.
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "cuscope/session.h"

namespace {

cuscope::SessionOptions Quiet(const std::string& name) {
  cuscope::SessionOptions o;
  o.output = ::testing::TempDir() + "/" + name + "_" + std::to_string(::getpid());
  o.quiet = true;
  return o;
}

TEST(SessionOptionsTest, TopDownWithoutAWindowThatEndsIsRefused) {
  cuscope::SessionOptions o = Quiet("top_down_no_window");
  o.top_down = 2;
  cuscope::Session session(o);
  EXPECT_FALSE(session.Start());
  EXPECT_TRUE(absl::StrContains(session.error(), "needs a timeline window that ends")) << session.error();
  EXPECT_FALSE(session.active());
}

TEST(SessionOptionsTest, TopDownChoosesItsOwnKernels) {
  cuscope::SessionOptions o = Quiet("top_down_selection");
  o.top_down = 2;
  o.duration_seconds = 1;
  o.kernel_name = "gemm";
  cuscope::Session session(o);
  EXPECT_FALSE(session.Start());
  EXPECT_TRUE(absl::StrContains(session.error(), "chooses the kernels itself")) << session.error();
}

TEST(SessionOptionsTest, BadDeviceListAndRateAreNamed) {
  cuscope::SessionOptions o = Quiet("bad_devices");
  o.gpu_metrics_devices = "gpu0";
  cuscope::Session bad_devices(o);
  EXPECT_FALSE(bad_devices.Start());
  EXPECT_TRUE(absl::StrContains(bad_devices.error(), "CUSCOPE_GPU_METRICS_DEVICES=gpu0")) << bad_devices.error();

  o.gpu_metrics_devices = "all";
  o.gpu_metrics_frequency_hz = 5;
  cuscope::Session bad_rate(o);
  EXPECT_FALSE(bad_rate.Start());
  EXPECT_TRUE(absl::StrContains(bad_rate.error(), "10..200000 Hz")) << bad_rate.error();
}

// Accepted: on a machine with a GPU the session runs; without one the only complaint is the driver.
TEST(SessionOptionsTest, TopDownWithADurationIsAccepted) {
  cuscope::SessionOptions o = Quiet("top_down_ok");
  o.top_down = 3;
  o.top_down_launches = 2;
  o.duration_seconds = 0.5;
  o.gpu_metrics_frequency_hz = 500;
  o.force_overwrite = true;
  cuscope::Session session(o);
  if (session.Start()) {
    EXPECT_TRUE(session.Stop()) << session.error();
    ::unlink(session.output_path().c_str());
  } else {
    EXPECT_TRUE(absl::StrContains(session.error(), "no NVIDIA driver")) << session.error();
  }
}

}  // namespace
