// The figures a session's mode keeps, chosen once: which modes keep any, where a closed interval
// goes (the hooks, the trace, flight mode's idle trigger) and that CUPTI's dropped records are
// counted into monitor mode's intervals once.
#include "lib/cupti/mode_figures.h"

#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace {

constexpr uint64_t kMs = 1'000'000ull;

settings::Config ConfigFor(settings::CollectionMode mode) {
  settings::Config config;
  config.mode = mode;
  config.monitor_interval_ms = 100;
  config.flush_period_ms = 10;  // intervals close 270 ms behind the clock
  return config;
}

// Flight mode with its idle trigger: a device idle over half of 300 ms (three intervals).
settings::Config FlightIdleConfig() {
  settings::Config config = ConfigFor(settings::CollectionMode::kFlight);
  config.flight_idle_share = 0.5;
  config.flight_idle_window_ms = 300;
  return config;
}

core::KernelActivity KernelAt(uint64_t start, uint64_t ns) {
  core::KernelActivity k;
  k.start = start;
  k.end = start + ns;
  k.config.name = "gemm";
  k.config.device = 0;
  return k;
}

struct Seen {
  std::vector<monitor::IntervalFigures> intervals;
  std::vector<monitor::IdleEvent> idle;
  ModeFigures::Outlets Outlets() {
    return {.intervals_closed = [this](const std::vector<monitor::IntervalFigures>& f) {
              intervals.insert(intervals.end(), f.begin(), f.end());
            },
            .gpu_idle = [this](const monitor::IdleEvent& e) { idle.push_back(e); }};
  }
};

TEST(ModeFiguresTest, MonitorModeAndFlightModeWithItsIdleTriggerKeepFiguresTheOthersNone) {
  testing::FakeCupti cupti;
  settings::Config trace = ConfigFor(settings::CollectionMode::kTrace);
  settings::Config flight = ConfigFor(settings::CollectionMode::kFlight);
  const settings::Config flight_idle = FlightIdleConfig();
  settings::Config monitor = ConfigFor(settings::CollectionMode::kMonitor);
  EXPECT_EQ(ModeFigures::ForMode(trace, cupti, {}), nullptr);
  EXPECT_EQ(ModeFigures::ForMode(flight, cupti, {}), nullptr);
  auto idle_figures = ModeFigures::ForMode(flight_idle, cupti, {});
  auto monitor_figures = ModeFigures::ForMode(monitor, cupti, {});
  ASSERT_NE(idle_figures, nullptr);
  ASSERT_NE(monitor_figures, nullptr);
  // GPU counter samples: monitor mode's figures keep them (its intervals report them), the idle
  // trigger's do not.
  EXPECT_TRUE(monitor_figures->keeps_counters());
  EXPECT_FALSE(idle_figures->keeps_counters());
}

// Flush period 10 ms: an interval's records may arrive up to 2 x 10 + 250 = 270 ms after it ends,
// so the first 100 ms interval closes once CUPTI's clock is past 370 ms, not before. The lag is
// taken from the config at the start: the config is gone by then (under the sanitizers a kept
// reference to it would be caught here).
TEST(ModeFiguresTest, AnIntervalClosesOnceItsRecordsCanNoLongerArrive) {
  testing::FakeCupti cupti;
  Seen seen;
  std::unique_ptr<ModeFigures> figures;
  {
    const settings::Config config = ConfigFor(settings::CollectionMode::kMonitor);
    figures = ModeFigures::ForMode(config, cupti, seen.Outlets());
  }
  ASSERT_NE(figures, nullptr);
  const uint64_t t0 = cupti.Timestamp();
  figures->aggregator().Add(KernelAt(t0 + 10 * kMs, 5 * kMs));
  cupti.AdvanceClock(360 * kMs);  // the records of [0, 100 ms) may still come
  EXPECT_FALSE(figures->Close(false, 0, nullptr));
  EXPECT_TRUE(seen.intervals.empty());
  cupti.AdvanceClock(20 * kMs);  // 380 ms: they can no longer; the next interval's still can
  EXPECT_FALSE(figures->Close(false, 0, nullptr));  // no trace: to the hook alone
  EXPECT_EQ(seen.intervals.size(), 1u);
}

TEST(ModeFiguresTest, MonitorModeHandsClosedIntervalsToTheHookAndTheTraceWithTheDroppedCountedOnce) {
  testing::FakeCupti cupti;
  const settings::Config config = ConfigFor(settings::CollectionMode::kMonitor);
  Seen seen;
  auto figures = ModeFigures::ForMode(config, cupti, seen.Outlets());
  ASSERT_NE(figures, nullptr);
  const uint64_t t0 = cupti.Timestamp();
  figures->aggregator().Add(KernelAt(t0 + 10 * kMs, 5 * kMs));
  core::ChunkBuilder builder([](v1::ApiDomain, uint32_t) { return "call"; });
  // Nothing is out of records' reach yet: nothing closes, and 3 dropped records wait.
  EXPECT_FALSE(figures->Close(false, 3, &builder));
  EXPECT_TRUE(seen.intervals.empty());
  // Later 5 in all: the 2 new ones join the 3, not 5 again.
  EXPECT_TRUE(figures->Close(true, 5, &builder));
  ASSERT_FALSE(seen.intervals.empty());
  uint64_t dropped = 0, kernels = 0;
  for (const auto& f : seen.intervals) {
    dropped += f.records_dropped_by_cupti;
    for (const auto& d : f.devices) kernels += d.kernels;
  }
  EXPECT_EQ(dropped, 5u);
  EXPECT_EQ(kernels, 1u);
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  EXPECT_EQ(static_cast<size_t>(chunk.monitor_intervals_size()), seen.intervals.size());
}

TEST(ModeFiguresTest, UnderADutyCycleTheQueuedWindowsReachTheFiguresBeforeTheyClose) {
  testing::FakeCupti cupti;
  settings::Config config = ConfigFor(settings::CollectionMode::kMonitor);
  config.duty_cycle = 0.1;
  Seen seen;
  auto figures = ModeFigures::ForMode(config, cupti, seen.Outlets());
  const uint64_t t0 = cupti.Timestamp();
  // Two windows of 5 ms, queued from another thread as the duty cycle's control thread does.
  figures->QueueSampleEdge(true, t0 + 10 * kMs, 1);
  figures->QueueSampleEdge(false, t0 + 15 * kMs, 1);
  figures->QueueSampleEdge(true, t0 + 30 * kMs, 1);
  figures->QueueSampleEdge(false, t0 + 35 * kMs, 1);
  figures->aggregator().Add(KernelAt(t0 + 11 * kMs, kMs));
  cupti.AdvanceClock(50 * kMs);  // the session ends after both windows, inside the first interval
  figures->Close(true, 0, nullptr);
  ASSERT_FALSE(seen.intervals.empty());
  uint32_t windows = 0;
  uint64_t observed = 0;
  for (const auto& f : seen.intervals) {
    windows += f.sample_windows;
    observed += f.observed_ns;
  }
  EXPECT_EQ(windows, 2u);
  EXPECT_EQ(observed, 10 * kMs);
  EXPECT_TRUE(seen.intervals.front().estimated);
}

TEST(ModeFiguresTest, MonitorModeWithoutATraceGivesTheHookAlone) {
  testing::FakeCupti cupti;
  const settings::Config config = ConfigFor(settings::CollectionMode::kMonitor);
  Seen seen;
  auto figures = ModeFigures::ForMode(config, cupti, seen.Outlets());
  figures->aggregator().Add(KernelAt(cupti.Timestamp(), kMs));
  EXPECT_FALSE(figures->Close(true, 0, nullptr));  // no file, or its writing failed
  EXPECT_FALSE(seen.intervals.empty());
}

TEST(ModeFiguresTest, FlightModeFiguresFeedTheIdleTriggerAndNeverTheTrace) {
  testing::FakeCupti cupti;
  const settings::Config config = FlightIdleConfig();
  Seen seen;
  auto figures = ModeFigures::ForMode(config, cupti, seen.Outlets());
  ASSERT_NE(figures, nullptr);
  // One short kernel, then a second of nothing: the device idles almost all of it.
  figures->aggregator().Add(KernelAt(cupti.Timestamp(), kMs));
  cupti.AdvanceClock(1000 * kMs);
  core::ChunkBuilder builder([](v1::ApiDomain, uint32_t) { return "call"; });
  EXPECT_FALSE(figures->Close(false, 7, &builder));
  ASSERT_FALSE(seen.intervals.empty());
  // Once for every full window of three idle intervals.
  ASSERT_EQ(seen.idle.size(), seen.intervals.size() / 3);
  ASSERT_FALSE(seen.idle.empty());
  EXPECT_EQ(seen.idle[0].device, 0u);
  EXPECT_GT(seen.idle[0].idle_share, 0.9);
  for (const auto& f : seen.intervals) EXPECT_EQ(f.records_dropped_by_cupti, 0u);  // the ring's concern
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  EXPECT_EQ(chunk.monitor_intervals_size(), 0);
}

TEST(ModeFiguresTest, FlightModeAtTheEndGivesTheHookItsLastIntervalsButTriggersNothing) {
  testing::FakeCupti cupti;
  const settings::Config config = FlightIdleConfig();
  Seen seen;
  auto figures = ModeFigures::ForMode(config, cupti, seen.Outlets());
  figures->aggregator().Add(KernelAt(cupti.Timestamp(), kMs));
  cupti.AdvanceClock(1000 * kMs);
  EXPECT_FALSE(figures->Close(true, 0, nullptr));
  EXPECT_FALSE(seen.intervals.empty());
  EXPECT_TRUE(seen.idle.empty());
}

}  // namespace
}  // namespace cuscope::cupti
