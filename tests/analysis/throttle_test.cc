// The gpu.throttle rule: a positive case, a negative control, and both sides of each threshold, on
// synthetic timelines.
#include "lib/analysis/rules/rules.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/core/counter_names.h"
#include "tests/analysis/rule_test_support.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::RunRule;
using cuscope::testing::With;

namespace counter = core::counter;

// A 100 ms kernel; NVML every 10 ms: nothing for 40 ms, the software power cap for 30 ms, thermal
// slowdown for 10 ms, nothing for the last 20 ms. The SM clock drops from 1980 to 1485 MHz meanwhile.
void ThrottledRun(SyntheticTrace& s, bool with_clock = true) {
  s.TimelineWindow(0, 100'000);
  s.Kernel("work", 0, 100'000);
  s.NvmlReadings(counter::kClocksEventReasons, 0, 10'000,
                 {0, 0, 0, 0, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap,
                  counter::kReasonHwThermalSlowdown, 0, 0});
  if (with_clock) {
    s.NvmlReadings(counter::kSmClockMhz, 0, 10'000, {1980, 1980, 1980, 1980, 1485, 1485, 1485, 1485, 1980, 1980});
  }
}

TEST(ThrottleRule, PowerAndThermalSlowdownDuringKernelsIsReportedWithTheClock) {
  SyntheticTrace s;
  ThrottledRun(s);
  const auto f = RunRule(s, ThrottleRule, "gpu.throttle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].headline,
            "GPU 0 ran 40.0% of its kernel time (40.000 ms of 100.000 ms) with its clocks held down by power and heat: "
            "software power cap, hardware thermal slowdown; SM clock 1485 MHz then, 1980 MHz at most");
  EXPECT_DOUBLE_EQ(*f[0].number("throttled_share"), 0.4);
  EXPECT_DOUBLE_EQ(*f[0].number("sw_power_cap_kernel_ns"), 30e6);
  EXPECT_DOUBLE_EQ(*f[0].number("hw_thermal_slowdown_kernel_ns"), 10e6);
  EXPECT_DOUBLE_EQ(*f[0].number("sm_clock_throttled_mhz"), 1485);
  EXPECT_DOUBLE_EQ(*f[0].number("sm_clock_max_mhz"), 1980);
  // 40 ms at a quarter of the clock lost: up to 10 ms, 10% of the span: a warning.
  EXPECT_EQ(f[0].recoverable_ns, 10'000'000u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  ASSERT_EQ(f[0].offenders.size(), 2u);
  EXPECT_EQ(f[0].offenders[0].name, "software power cap");
  EXPECT_EQ(f[0].offenders[0].time_ns, 30'000'000u);
  EXPECT_NE(f[0].recommendation.find("not comparable with an unthrottled run"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("nvidia-smi -q -d POWER"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("check cooling"), std::string::npos);
}

TEST(ThrottleRule, ThrottlingWhileTheGpuIdlesIsNotReported) {
  SyntheticTrace s;
  s.Kernel("before", 0, 30'000);
  s.Kernel("after", 70'000, 30'000);
  // The power cap holds from 30 to 70 ms, exactly while no kernel runs.
  s.NvmlReadings(counter::kClocksEventReasons, 0, 10'000,
                 {0, 0, 0, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap, counter::kReasonSwPowerCap,
                  counter::kReasonSwPowerCap, 0, 0, 0});
  EXPECT_TRUE(RunRule(s, ThrottleRule, "gpu.throttle").empty());
}

TEST(ThrottleRule, IdleAndApplicationClockReasonsAreNotThrottling) {
  SyntheticTrace s;
  s.Kernel("work", 0, 100'000);
  const double idle = counter::kReasonGpuIdle;
  const double app = counter::kReasonApplicationsClocksSetting | counter::kReasonGpuIdle;
  s.NvmlReadings(counter::kClocksEventReasons, 0, 10'000, {idle, idle, app, app, app, idle, idle, idle, idle, idle});
  EXPECT_TRUE(RunRule(s, ThrottleRule, "gpu.throttle").empty());
}

TEST(ThrottleRule, TheKernelShareThresholdHasTwoSides) {
  // A 1 ms kernel; the power cap is read at 0.950 ms (or 0.951 ms) and holds one period.
  auto run = [](double capped_at_us, const Thresholds& t) {
    SyntheticTrace s;
    s.Kernel("work", 0, 1000);
    s.Counter(counter::kClocksEventReasons, v1::COUNTER_SOURCE_NVML,
              {{0, 0, 0}, {capped_at_us, 0, static_cast<double>(counter::kReasonSwPowerCap)}});
    return RunRule(s, ThrottleRule, "gpu.throttle", t);
  };
  EXPECT_EQ(run(950, Thresholds()).size(), 1u);  // 50 us of 1000: exactly 5%
  EXPECT_TRUE(run(951, Thresholds()).empty());   // 49 us: 4.9%
  EXPECT_TRUE(run(950, With({"throttle_min_kernel_share=0.06"})).empty());
  EXPECT_EQ(run(951, With({"throttle_min_kernel_share=0.049"})).size(), 1u);
}

TEST(ThrottleRule, WithoutTheSmClockTheLossIsNotEstimated) {
  SyntheticTrace s;
  ThrottledRun(s, /*with_clock=*/false);
  const auto f = RunRule(s, ThrottleRule, "gpu.throttle");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].headline.find("; the SM clock was not sampled"), std::string::npos) << f[0].headline;
  EXPECT_EQ(f[0].recoverable_ns, 0u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_FALSE(f[0].number("sm_clock_throttled_mhz").has_value());
}

TEST(ThrottleRule, NoCountersNoFinding) {
  SyntheticTrace s;
  s.Kernel("work", 0, 1000);
  EXPECT_TRUE(RunRule(s, ThrottleRule, "gpu.throttle").empty());
}

}  // namespace
}  // namespace cuscope::analysis
