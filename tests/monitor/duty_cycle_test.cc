// The duty cycle's schedule and its governor, with a made-up clock and made-up recording rates.
#include "lib/monitor/duty_cycle.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "lib/monitor/duty_governor.h"

// A namespace of its own: other files of this test program have helpers of the same names
// (kMs, kSecond), and CI compiles them together (CUSCOPE_UNITY_TESTS).
namespace cuscope::monitor::duty_cycle_test {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSecond = 1000 * kMs;

DutyOptions Options(double fixed_duty, double budget = 0.02) {
  DutyOptions o;
  o.interval_ns = kSecond;
  o.windows_per_interval = 8;
  o.fixed_duty = fixed_duty;
  o.budget = budget;
  return o;
}

// Records per ns for a program that takes `plain_ns` per launch and pays `cost_ns` per record.
double RecordedRate(double plain_ns, double cost_ns) { return 1.0 / (plain_ns + cost_ns); }

TEST(DutyGovernorTest, AFixedDutyGivesOneWindowOfThatShareInsideEachSlot) {
  DutyGovernor g(Options(0.1));
  std::vector<uint64_t> offsets;
  for (uint64_t slot = 0; slot < 64; ++slot) {
    const DutyGovernor::Window w = g.WindowOf(slot);
    EXPECT_EQ(w.off_ns - w.on_ns, 12'500'000u);  // 10% of a 125 ms slot
    EXPECT_GE(w.on_ns, slot * 125 * kMs);
    EXPECT_LE(w.off_ns, (slot + 1) * 125 * kMs);
    offsets.push_back(w.on_ns - slot * 125 * kMs);
  }
  // Spread over the slot, not at one place a periodic program could line up with.
  const auto [lo, hi] = std::minmax_element(offsets.begin(), offsets.end());
  EXPECT_LT(*lo, 20 * kMs);
  EXPECT_GT(*hi, 90 * kMs);
  g.Recorded(12'500'000, 12'500'000, 1'000'000, 1'000'000);  // measured, but a fixed duty stays
  EXPECT_DOUBLE_EQ(g.duty(), 0.1);
  EXPECT_FALSE(g.governed());
}

TEST(DutyGovernorTest, ALaunchStormOfTinyKernelsIsRecordedAboutAThirteenthOfTheTime) {
  // 6.9 us a launch plain, 1.8 us a record: recording all the time adds 1.8/6.9 = 26%.
  DutyGovernor g(Options(0));
  EXPECT_DOUBLE_EQ(g.duty(), 0.1);  // before anything is measured
  for (int i = 0; i < 20; ++i) g.Recorded(10 * kMs, 10 * kMs, static_cast<uint64_t>(10 * kMs * RecordedRate(6900, 1800)), static_cast<uint64_t>(10 * kMs * RecordedRate(6900, 1800)));
  EXPECT_NEAR(g.full_cost(), 1800.0 / 6900, 0.002);
  EXPECT_NEAR(g.duty(), 0.02 / (1800.0 / 6900), 0.001);
  EXPECT_NEAR(g.estimated_cost(), 0.02, 1e-6);
}

TEST(DutyGovernorTest, AProgramThatLaunchesRarelyIsRecordedAllTheTime) {
  DutyGovernor g(Options(0));
  // 1,000 launches a second: 0.18% if recorded all the time, under the 2% budget.
  g.Recorded(100 * kMs, 100 * kMs, 100, 100);
  EXPECT_DOUBLE_EQ(g.duty(), 1.0);
  EXPECT_NEAR(g.estimated_cost(), 0.0018, 0.0001);
  const DutyGovernor::Window w = g.WindowOf(3);
  EXPECT_EQ(w.on_ns, 3 * 125 * kMs);
  EXPECT_EQ(w.off_ns, 4 * 125 * kMs);
}

TEST(DutyGovernorTest, AtTheBudgetExactlyItRecordsAllTheTimeAndJustOverLess) {
  // full cost = c*r/(1-c*r) = budget  <=>  c*r = budget/(1+budget).
  const double budget = 0.02;
  const double at = budget / (1 + budget) / 1800.0;  // records per ns
  DutyGovernor g(Options(0, budget));
  g.Recorded(kSecond, kSecond, static_cast<uint64_t>(at * kSecond), static_cast<uint64_t>(at * kSecond));
  EXPECT_DOUBLE_EQ(g.duty(), 1.0);
  DutyGovernor over(Options(0, budget));
  over.Recorded(kSecond, kSecond, static_cast<uint64_t>(at * kSecond * 1.01) + 1, static_cast<uint64_t>(at * kSecond * 1.01) + 1);
  EXPECT_LT(over.duty(), 1.0);
  EXPECT_GT(over.duty(), 0.98);
}

TEST(DutyGovernorTest, NeverUnderTheFloorWhateverTheRate) {
  DutyGovernor g(Options(0));
  g.Recorded(kMs, kMs, 10'000'000, 10'000'000);  // absurd: more records than nanoseconds
  EXPECT_DOUBLE_EQ(g.duty(), 0.01);
}

TEST(DutyGovernorTest, AChangeOfPaceIsFollowedWithinASecond) {
  // Measured as the schedule measures: once a 125 ms slot, for the window the duty gave it.
  DutyGovernor g(Options(0));
  const auto slot = [&g](double records_per_ns) {
    const uint64_t window = static_cast<uint64_t>(g.duty() * 125 * kMs);
    const uint64_t records = static_cast<uint64_t>(records_per_ns * static_cast<double>(window));
    g.Recorded(125 * kMs, window, records, records);
  };
  for (int i = 0; i < 8; ++i) slot(1e-4);  // 100k records a second: 22% if all recorded
  const double storm = g.duty();
  EXPECT_LT(storm, 0.12);
  for (int i = 0; i < 8; ++i) slot(5e-7);  // quiet: 500 a second
  EXPECT_DOUBLE_EQ(g.duty(), 1.0);
  for (int i = 0; i < 2; ++i) slot(1e-4);  // and a storm again: the calls show it at once
  EXPECT_LT(g.duty(), 0.15);
}

TEST(DutyGovernorTest, KernelRecordsThatComeLateInBuffersStillHoldTheBudget) {
  // A replayed graph: one call per 100 kernels, so the rate is the kernel records'; they arrive
  // in a buffer every half second, four slots' worth at once. The duty settles where the budget
  // says and stays within a factor of two of it between buffers.
  DutyGovernor g(Options(0));
  const double kernels_per_ns = RecordedRate(1000, 1800);  // 1 us a kernel plain
  const double settled = 0.02 / (1800 * kernels_per_ns / (1 - 1800 * kernels_per_ns));
  uint64_t pending = 0;
  double low = 1, high = 0;
  for (int i = 0; i < 64; ++i) {
    const uint64_t window = static_cast<uint64_t>(g.duty() * 125 * kMs);
    const uint64_t kernels = static_cast<uint64_t>(kernels_per_ns * static_cast<double>(window));
    pending += kernels;
    const uint64_t delivered = i % 4 == 3 ? pending : 0;
    if (delivered != 0) pending = 0;
    g.Recorded(125 * kMs, window, kernels / 100, delivered);
    if (i >= 32) {
      low = std::min(low, g.duty());
      high = std::max(high, g.duty());
    }
  }
  EXPECT_GT(low, settled / 2);
  EXPECT_LT(high, settled * 2);
}

// A fake session for DutyCycle: a clock moved by hand, recording switched by the hooks, and a
// program that makes `rate` records per ns while recorded.
struct FakeSession {
  bool on = true;
  bool ended = false;
  bool every = false;
  double rate = 0;
  uint64_t records = 0;
  // Records made while `held` stay in CUPTI's buffers until a hand-over.
  bool held = false;
  bool lost = false;  // records made while `lost` are never delivered, handed over or not
  bool launching = true;  // the calls are kernel launches (else syncs, copies: no kernel record)
  uint64_t launched = 0;
  uint64_t arrived = 0;
  std::vector<uint64_t> missing;  // what each records_missing call said
  std::vector<bool> on_at_hand_over;  // whether recording was on at each hand-over
  int switches = 0;
  std::vector<std::pair<bool, double>> edges;  // (on, weight)
  DutyCycle::Hooks Hooks() {
    return {.record = [this](bool v, double weight) {
              if (ended) return false;
              on = v;
              edges.emplace_back(v, weight);
              ++switches;
              return true;
            },
            .every_record_wanted = [this] { return every; },
            .calls = [this] { return records; },
            .kernel_records = [this] {
              if (!held && !lost) arrived = records;
              return arrived;
            },
            .launches = [this] { return launched; },
            .hand_over = [this] {
              on_at_hand_over.push_back(on);
              if (!lost) arrived = records;
            },
            .records_missing = [this](uint64_t calls) { missing.push_back(calls); }};
  }
  // Moves the clock `length` on in 100 us steps: the program records while recording is on, and
  // the duty cycle steps when it asked to. Returns how long recording was on.
  std::chrono::microseconds Run(DutyCycle& duty, DutyCycle::Clock::time_point& now, DutyCycle::Clock::time_point& next,
                                DutyCycle::Clock::duration length) {
    const auto step = std::chrono::microseconds(100);
    auto recorded = std::chrono::microseconds(0);
    const auto until = now + length;
    while (now < until) {
      now += step;
      if (on) {
        recorded += step;
        records += static_cast<uint64_t>(rate * 100'000);
        if (launching) launched += static_cast<uint64_t>(rate * 100'000);
      }
      if (now >= next) next = duty.Step(now);
    }
    return recorded;
  }
};

TEST(DutyCycleTest, RecordsOnlyInsideTheWindowsAndTheShareIsTheDuty) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0.1), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  const uint64_t on_ns = std::chrono::nanoseconds(s.Run(duty, now, next, std::chrono::seconds(4))).count();
  EXPECT_NEAR(static_cast<double>(on_ns) / (4.0 * kSecond), 0.1, 0.005);
  EXPECT_NEAR(s.switches, 2 * 32, 2);  // on and off once per slot
}

TEST(DutyCycleTest, TheGovernorLowersTheDutyInALaunchStormAndSaysWhatItCosts) {
  FakeSession s;
  s.rate = RecordedRate(6900, 1800);
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  s.Run(duty, now, next, std::chrono::seconds(3));
  const DutyCycle::Status st = duty.status();
  EXPECT_TRUE(st.governed);
  EXPECT_NEAR(st.duty, 0.077, 0.01);
  EXPECT_NEAR(st.estimated_cost, 0.02, 0.002);
  EXPECT_NEAR(st.records_per_second, s.rate * 1e9, 0.05 * s.rate * 1e9);
}

TEST(DutyCycleTest, SomethingThatNeedsEveryRecordKeepsRecordingOnUntilItIsDone) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0.05), s.Hooks(), t0);
  auto now = t0 + std::chrono::milliseconds(1);
  duty.Step(now);
  s.every = true;
  for (int i = 0; i < 100; ++i) {
    now += std::chrono::milliseconds(10);
    duty.Step(now);
    EXPECT_TRUE(s.on);
  }
  EXPECT_TRUE(duty.status().every_record);
  EXPECT_DOUBLE_EQ(duty.status().duty, 1.0);
  s.every = false;
  int off = 0;
  for (int i = 0; i < 100; ++i) {
    now += std::chrono::milliseconds(10);
    duty.Step(now);
    off += s.on ? 0 : 1;
  }
  EXPECT_GT(off, 80);  // back to 5%
}

TEST(DutyCycleTest, EachWindowSaysWhatItStandsForAndARecordingOfEverythingStandsForItself) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0.1), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  while (now < t0 + std::chrono::milliseconds(500)) {
    now = next;
    next = duty.Step(now);
  }
  ASSERT_GE(s.edges.size(), 6u);
  // Recording was on from the session's start until the first window: that stretch stood for itself.
  EXPECT_FALSE(s.edges[0].first);
  EXPECT_EQ(s.edges[0].second, 1.0);
  for (size_t i = 1; i < s.edges.size(); ++i) EXPECT_NEAR(s.edges[i].second, 10.0, 0.01) << i;
  // Something needs every record in the middle of a window: it is closed as planned and a
  // window of weight 1 opens.
  while (!s.on) {
    now += std::chrono::milliseconds(1);
    duty.Step(now);
  }
  s.edges.clear();
  s.every = true;
  now += std::chrono::milliseconds(1);
  duty.Step(now);
  ASSERT_EQ(s.edges.size(), 2u);
  EXPECT_FALSE(s.edges[0].first);
  EXPECT_TRUE(s.edges[1].first);
  EXPECT_EQ(s.edges[1].second, 1.0);
}

TEST(DutyCycleTest, AWindowClosedLateStandsForItsSlotOnly) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0.1), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  while (!s.on || s.edges.empty()) {  // the first window of a slot opens
    now = next;
    next = duty.Step(now);
  }
  const auto opened = now;
  s.edges.clear();
  // The thread wakes 25 ms after the opening instead of 12.5: the window closes 25 ms long.
  duty.Step(opened + std::chrono::microseconds(25'000));
  ASSERT_FALSE(s.edges.empty());
  EXPECT_FALSE(s.edges[0].first);
  EXPECT_NEAR(s.edges[0].second, 125.0 / 25, 0.01);
}

TEST(DutyCycleTest, OnceTheSessionsRecordingEndedNothingIsSwitchedAgain) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0.1), s.Hooks(), t0);
  duty.Step(t0 + std::chrono::milliseconds(1));
  s.ended = true;
  const int switches = s.switches;
  auto now = t0;
  for (int i = 0; i < 50; ++i) {
    now += std::chrono::milliseconds(20);
    duty.Step(now);
  }
  EXPECT_LE(s.switches, switches);
  EXPECT_EQ(duty.Step(now), DutyCycle::Clock::time_point::max());
}

TEST(DutyCycleTest, AThreadThatWakesLateSkipsTheSlotsThatPassed) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0.1), s.Hooks(), t0);
  duty.Step(t0);
  const auto late = t0 + std::chrono::seconds(10);
  const auto next = duty.Step(late);
  EXPECT_GT(next, late);
  EXPECT_LT(next, late + std::chrono::milliseconds(250));
}

TEST(DutyCycleTest, ADutyOfOneNeverSwitches) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(1.0), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  while (now < t0 + std::chrono::seconds(2)) {
    now = next;
    next = duty.Step(now);
  }
  EXPECT_EQ(s.switches, 0);
  EXPECT_TRUE(s.on);
}

TEST(DutyCycleTest, AStormAfterAQuietStretchIsRecordedWholeForAnEighthOfASlotAtMost) {
  FakeSession s;
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(Options(0), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  s.Run(duty, now, next, std::chrono::seconds(2));  // nothing launched: all recorded (nothing to pay for)
  EXPECT_DOUBLE_EQ(duty.status().duty, 1.0);
  ASSERT_TRUE(s.on);
  s.rate = RecordedRate(6900, 1800);
  const auto recorded = s.Run(duty, now, next, std::chrono::milliseconds(125));
  EXPECT_LE(recorded, std::chrono::microseconds(125'000 / 8 + 200));
  EXPECT_NEAR(duty.status().duty, 0.077, 0.01);  // the budget's share from the first measurement
}


DutyOptions HandOverOptions(uint64_t after_ns) {
  DutyOptions o = Options(0.05);
  o.hand_over_after_ns = after_ns;
  return o;
}

TEST(DutyCycleTest, RecordsHeldBackInCuptisBuffersAreHandedOverBeforeTheNextWindow) {
  FakeSession s;
  s.rate = RecordedRate(6900, 1800);
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(HandOverOptions(750 * kMs), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  s.Run(duty, now, next, std::chrono::seconds(1));
  EXPECT_EQ(duty.status().hand_overs, 0u);
  // From now on a record that never completes holds every later one back.
  s.held = true;
  const uint64_t before = s.records;
  s.Run(duty, now, next, std::chrono::milliseconds(700));
  EXPECT_EQ(duty.status().hand_overs, 0u);  // not yet: records may still be on their way
  s.Run(duty, now, next, std::chrono::milliseconds(300));
  // Handed over by the first window after 750 ms, with recording off.
  ASSERT_EQ(duty.status().hand_overs, 1u);
  ASSERT_EQ(s.on_at_hand_over.size(), 1u);
  EXPECT_FALSE(s.on_at_hand_over[0]);
  EXPECT_GT(s.arrived, before);
  // Still held: handed over again, at most once per 750 ms plus a slot.
  s.Run(duty, now, next, std::chrono::seconds(3));
  EXPECT_GE(duty.status().hand_overs, 4u);
  EXPECT_LE(duty.status().hand_overs, 5u);
  for (bool on : s.on_at_hand_over) EXPECT_FALSE(on);
}

TEST(DutyCycleTest, RecordsThatArriveAreNeverHandedOverByForce) {
  FakeSession s;
  s.rate = RecordedRate(6900, 1800);
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(HandOverOptions(750 * kMs), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  s.Run(duty, now, next, std::chrono::seconds(5));
  EXPECT_EQ(duty.status().hand_overs, 0u);
  EXPECT_TRUE(s.on_at_hand_over.empty());
}

TEST(DutyCycleTest, AProgramThatTimesNoCallsNeedsNoHandOverAndNoneIsAskedWithoutAWait) {
  FakeSession s;  // rate 0: no calls, no records
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(HandOverOptions(750 * kMs), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  s.held = true;
  s.Run(duty, now, next, std::chrono::seconds(5));
  EXPECT_EQ(duty.status().hand_overs, 0u);
  // Calls held back, but hand-overs turned off (0).
  FakeSession t;
  t.rate = RecordedRate(6900, 1800);
  t.held = true;
  DutyCycle off(HandOverOptions(0), t.Hooks(), t0);
  now = t0;
  next = off.Step(now);
  t.Run(off, now, next, std::chrono::seconds(5));
  EXPECT_EQ(off.status().hand_overs, 0u);
  EXPECT_EQ(t.arrived, 0u);
}

TEST(DutyCycleTest, KernelRecordsThatStopComingAreSaidMissingOnceAndEverythingIsRecordedFromThen) {
  FakeSession s;
  s.rate = RecordedRate(6900, 1800);
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(HandOverOptions(750 * kMs), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  s.Run(duty, now, next, std::chrono::seconds(1));
  s.lost = true;
  // The first wait ends in a hand-over (records may be held back): not yet missing.
  s.Run(duty, now, next, std::chrono::milliseconds(1000));
  EXPECT_EQ(duty.status().hand_overs, 1u);
  EXPECT_TRUE(s.missing.empty());
  EXPECT_FALSE(duty.status().records_missing);
  // The hand-over brought nothing and the next wait passes: missing, said once, recorded whole.
  s.Run(duty, now, next, std::chrono::milliseconds(1000));
  ASSERT_EQ(s.missing.size(), 1u);
  EXPECT_GT(s.missing[0], 0u);
  EXPECT_TRUE(duty.status().records_missing);
  EXPECT_TRUE(s.on);
  const int switches = s.switches;
  s.Run(duty, now, next, std::chrono::seconds(3));
  EXPECT_EQ(s.switches, switches);
  EXPECT_EQ(s.missing.size(), 1u);
  EXPECT_EQ(duty.status().hand_overs, 1u);
  EXPECT_DOUBLE_EQ(duty.status().duty, 1.0);
}

TEST(DutyCycleTest, CallsThatLaunchNoKernelNeverMakeRecordsMissing) {
  FakeSession s;
  s.rate = RecordedRate(6900, 1800);
  const auto t0 = DutyCycle::Clock::time_point{};
  DutyCycle duty(HandOverOptions(750 * kMs), s.Hooks(), t0);
  auto now = t0;
  auto next = duty.Step(now);
  s.Run(duty, now, next, std::chrono::seconds(1));
  // A stretch of copies and synchronizations: calls timed, no kernel launched, no kernel record.
  s.lost = true;
  s.launching = false;
  s.Run(duty, now, next, std::chrono::seconds(5));
  EXPECT_EQ(duty.status().hand_overs, 0u);
  EXPECT_TRUE(s.missing.empty());
  EXPECT_FALSE(duty.status().records_missing);
  EXPECT_LT(duty.status().duty, 1.0);  // still held under the budget
}

}  // namespace
}  // namespace cuscope::monitor::duty_cycle_test
