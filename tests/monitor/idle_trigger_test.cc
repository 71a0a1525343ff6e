// Flight mode's GPU-idle trigger over closed intervals: over the share of a full window or not,
// the edge, devices that joined late, one trigger per window, the idlest device named.
#include "lib/monitor/idle_trigger.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

namespace cuscope::monitor {
namespace {

constexpr uint64_t kSecond = 1'000'000'000ull;

// Interval i (1 s long) with the devices' busy time (the rest of the second idle).
IntervalFigures Interval(uint64_t i, std::initializer_list<std::pair<uint32_t, uint64_t>> busy_by_device) {
  IntervalFigures f;
  f.start_ns = i * kSecond;
  f.end_ns = (i + 1) * kSecond;
  for (const auto& [device, busy] : busy_by_device) {
    DeviceFigures d;
    d.device = device;
    d.busy_ns = busy;
    d.idle_ns = kSecond - busy;
    f.devices.push_back(d);
  }
  return f;
}

TEST(IdleTriggerTest, ADeviceIdleOverTheShareOfAFullWindowTriggers) {
  IdleTrigger trigger({.idle_share = 0.5, .window_ns = 3 * kSecond});
  EXPECT_FALSE(trigger.Add(Interval(0, {{0, kSecond / 5}})).has_value());
  EXPECT_FALSE(trigger.Add(Interval(1, {{0, kSecond / 5}})).has_value());  // 2 s: not a full window yet
  auto idle = trigger.Add(Interval(2, {{0, kSecond / 5}}));
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->device, 0u);
  EXPECT_NEAR(idle->idle_share, 0.8, 1e-9);
  EXPECT_EQ(idle->window_ns, 3 * kSecond);
}

TEST(IdleTriggerTest, BusyEnoughOrExactlyAtTheShareDoesNotTrigger) {
  IdleTrigger busy({.idle_share = 0.5, .window_ns = 2 * kSecond});
  for (uint64_t i = 0; i < 10; ++i) EXPECT_FALSE(busy.Add(Interval(i, {{0, 6 * kSecond / 10}})).has_value());
  IdleTrigger edge({.idle_share = 0.5, .window_ns = 2 * kSecond});
  EXPECT_FALSE(edge.Add(Interval(0, {{0, kSecond / 2}})).has_value());
  EXPECT_FALSE(edge.Add(Interval(1, {{0, kSecond / 2}})).has_value());  // 50% idle: not above 50%
  EXPECT_TRUE(edge.Add(Interval(2, {{0, kSecond / 2 - 1}})).has_value());  // a hair above
}

TEST(IdleTriggerTest, TheWindowSlidesAndAfterATriggerStartsAfresh) {
  IdleTrigger trigger({.idle_share = 0.5, .window_ns = 2 * kSecond});
  EXPECT_FALSE(trigger.Add(Interval(0, {{0, kSecond}})).has_value());
  EXPECT_FALSE(trigger.Add(Interval(1, {{0, kSecond}})).has_value());
  EXPECT_FALSE(trigger.Add(Interval(2, {{0, 0}})).has_value());  // [1, 3): half idle
  EXPECT_TRUE(trigger.Add(Interval(3, {{0, 0}})).has_value());   // [2, 4): all idle
  // Still idle, but the next judgement needs two new seconds.
  EXPECT_FALSE(trigger.Add(Interval(4, {{0, 0}})).has_value());
  EXPECT_TRUE(trigger.Add(Interval(5, {{0, 0}})).has_value());
}

TEST(IdleTriggerTest, ADeviceThatJoinedLateIsNotJudgedAndTheIdlestIsNamed) {
  IdleTrigger late({.idle_share = 0.5, .window_ns = 2 * kSecond});
  EXPECT_FALSE(late.Add(Interval(0, {})).has_value());
  EXPECT_FALSE(late.Add(Interval(1, {{0, 0}})).has_value());  // device 0 appeared in the second interval
  EXPECT_TRUE(late.Add(Interval(2, {{0, 0}})).has_value());

  IdleTrigger two({.idle_share = 0.5, .window_ns = kSecond});
  auto idle = two.Add(Interval(0, {{0, kSecond / 4}, {1, kSecond / 10}}));
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->device, 1u);
  EXPECT_NEAR(idle->idle_share, 0.9, 1e-9);
}

}  // namespace
}  // namespace cuscope::monitor
