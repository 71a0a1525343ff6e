// GPU counters over time as the collector records them: PM sampling and NVML samples in the trace
// during the timeline window, stopped cleanly when the program exits with them running, and, in
// the one-run top-down, stopped before the first kernel-metrics replay so the two never share the
// GPU's counters.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/core/trace.h"
#include "tests/gpu/gpu_test_support.h"

namespace cuscope {
namespace {

using testing::ParseKeyValues;
using testing::RunCommand;
using testing::TempTracePath;

const std::string kCli = testing::BuildTree::Cli();
const std::string kKernels = testing::BuildTree::Example("kernel_internals");
const std::string kReplayApp = testing::BuildTree::Bin("replay_app");
const std::string kKnownWork = testing::BuildTree::Example("known_work");
constexpr char kSmActive[] = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";

class CountersCollectorGpuTest : public testing::GpuTest {};

struct Span {
  uint64_t begin = 0, end = 0;
};

// The COUNTER_SAMPLING windows, paired from their opening and closing halves.
std::vector<Span> SamplingWindows(const core::Trace& t) {
  std::vector<Span> out;
  for (const auto& w : t.windows) {
    if (w.kind() != v1::WINDOW_KIND_COUNTER_SAMPLING) continue;
    if (w.start_ns() != 0) out.push_back({w.start_ns(), w.end_ns()});
    if (w.start_ns() == 0 && !out.empty() && out.back().end == 0) out.back().end = w.end_ns();
  }
  return out;
}

std::vector<const core::CounterSample*> Samples(const core::Trace& t, v1::CounterSource source,
                                                const std::string& name = "") {
  std::vector<const core::CounterSample*> out;
  for (const auto& c : t.counter_samples) {
    if (c.source == source && (name.empty() || t.dict.str(c.name) == name)) out.push_back(&c);
  }
  return out;
}

// Back-to-back launches of one kernel as busy spans (gaps under 20 us joined).
std::vector<Span> KernelSpans(const core::Trace& t, const std::string& name_part) {
  std::vector<Span> spans;
  for (const auto& k : t.kernels) {
    if (!absl::StrContains(t.dict.str(t.dict.signature(k.signature).name()), name_part)) continue;
    if (!spans.empty() && k.start < spans.back().end + 20'000) {
      spans.back().end = std::max(spans.back().end, k.end);
    } else {
      spans.push_back({k.start, k.end});
    }
  }
  return spans;
}

TEST_F(CountersCollectorGpuTest, SamplesDuringTheWindowShowTheBusyKernel) {
  const std::string trace = TempTracePath("counters_plain");
  const std::string program = absl::StrCat(kKernels, " --iterations 400 --kernel fma_chains");
  auto plain = RunCommand(program);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  auto run = RunCommand(absl::StrCat(kCli, " profile --gpu-metrics-devices all -o ", trace, " -- ", program, " 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(ParseKeyValues(run.output)["checksum_fma"], ParseKeyValues(plain.output)["checksum_fma"]);
  EXPECT_FALSE(absl::StrContains(run.output, "GPU counters over time are off")) << run.output;

  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto windows = SamplingWindows(*t);
  ASSERT_EQ(windows.size(), 1u);
  ASSERT_GT(windows[0].end, windows[0].begin);
  EXPECT_FALSE(t->header.config().sampled_counters().empty());
  EXPECT_EQ(t->header.config().sampling_interval_ns(), 1'000'000u);

  const auto pm = Samples(*t, v1::COUNTER_SOURCE_PM_SAMPLING);
  const auto nvml = Samples(*t, v1::COUNTER_SOURCE_NVML);
  ASSERT_FALSE(pm.empty());
  EXPECT_FALSE(nvml.empty());
  for (const auto* c : pm) {
    EXPECT_GE(c->start + 2'000'000, windows[0].begin);
    EXPECT_LE(c->start, windows[0].end + 2'000'000);
  }
  ASSERT_TRUE(t->stats.has_value());
  EXPECT_GT(t->stats->counter_samples(), 0u);

  // SM active in the samples that lie wholly inside the FMA kernels' busy span.
  const auto busy = KernelSpans(*t, "fma_chains");
  ASSERT_FALSE(busy.empty());
  std::vector<double> inside;
  for (const auto* c : Samples(*t, v1::COUNTER_SOURCE_PM_SAMPLING, kSmActive)) {
    for (const Span& s : busy) {
      if (c->start >= s.begin && c->end <= s.end) inside.push_back(c->value);
    }
  }
  ASSERT_GE(inside.size(), 20u) << "the FMA kernels ran " << (busy.back().end - busy.front().begin) / 1e6 << " ms";
  std::sort(inside.begin(), inside.end());
  EXPECT_GE(inside[inside.size() / 2], 90.0);
}

// A program that is done in ~0.1 s exits while the counters' first set-up would still run on the
// control thread; it crashed at exit (the profiler host libraries' objects destroyed under the
// set-up) until the first set-up moved onto the program's thread. Each run exits as it would
// without cuscope and samples its work, in a trace and in monitor mode.
TEST_F(CountersCollectorGpuTest, ShortProgramsExitCleanlyWithTheCountersOn) {
  auto plain = RunCommand(kKnownWork);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  for (int run = 0; run < 6; ++run) {
    const bool monitor = run % 3 == 2;
    const std::string trace = TempTracePath(absl::StrCat("counters_short_", run));
    auto r = RunCommand(absl::StrCat(kCli, " profile -f --gpu-metrics-devices all ", monitor ? "--mode monitor " : "",
                                     "-o ", trace, " -- ", kKnownWork, " 2>&1"));
    ASSERT_EQ(r.exit_code, 0) << "run " << run << ": " << r.output;
    EXPECT_FALSE(absl::StrContains(r.output, "GPU counters over time are off")) << r.output;
    auto t = core::LoadTrace(trace);
    ASSERT_TRUE(t.ok()) << t.status();
    if (!monitor) {
      EXPECT_FALSE(Samples(*t, v1::COUNTER_SOURCE_PM_SAMPLING).empty()) << "run " << run;
    } else {
      ASSERT_FALSE(t->monitor_intervals.empty()) << "run " << run;
      bool counters = false;
      for (const auto& interval : t->monitor_intervals) {
        for (const auto& device : interval.devices()) counters = counters || device.counters_size() > 0;
      }
      EXPECT_TRUE(counters) << "run " << run << ": no counter figures in the monitor intervals";
    }
  }
}

// The window is cudaProfilerStart/Stop around 6 iterations, opened 800 ms after the program's
// set-up and held open 300 ms first; the hot kernels launch again 800 ms after it
// (tests/gpu/replay_app.cu).
TEST_F(CountersCollectorGpuTest, TopDownStopsSamplingBeforeItsKernelMetrics) {
  const std::string trace = TempTracePath("counters_top_down");
  const std::string program = absl::StrCat(kReplayApp, " --iterations 12 --window 6 --pause-ms 800 --before-ms 800 --hold-ms 300");
  auto plain = RunCommand(program);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  auto run = RunCommand(absl::StrCat(kCli, " profile --top-down=1 --top-down-launches 2 -c cudaProfilerApi -o ", trace,
                                     " -- ", program, " 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* key : {"hash_histogram", "hash_inplace", "hash_accumulate", "counter"}) {
    EXPECT_EQ(ParseKeyValues(run.output)[key], ParseKeyValues(plain.output)[key]) << key;
  }
  EXPECT_FALSE(absl::StrContains(run.output, "GPU counters over time are off")) << run.output;

  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto windows = SamplingWindows(*t);
  ASSERT_EQ(windows.size(), 1u);
  ASSERT_GT(windows[0].end, 0u);
  ASSERT_EQ(t->metrics.size(), 2u);
  uint64_t first_replay = UINT64_MAX;
  for (const auto& w : t->windows) {
    if (w.kind() == v1::WINDOW_KIND_METRICS && w.start_ns() != 0) first_replay = std::min<uint64_t>(first_replay, w.start_ns());
  }
  ASSERT_NE(first_replay, UINT64_MAX);
  EXPECT_LT(windows[0].end, first_replay);
  const auto pm = Samples(*t, v1::COUNTER_SOURCE_PM_SAMPLING);
  ASSERT_FALSE(pm.empty());
  for (const auto* c : pm) EXPECT_LT(c->start, first_replay);
  // Prepared when the program made its context (0.3-0.4 s of set-up, done before the window), the
  // sampler starts with the window: its first samples come within milliseconds of cudaProfilerStart.
  uint64_t window_open = 0;
  for (const auto& w : t->windows) {
    if (w.kind() == v1::WINDOW_KIND_TIMELINE && w.start_ns() != 0 && window_open == 0) window_open = w.start_ns();
  }
  ASSERT_NE(window_open, 0u);
  uint64_t first_sample = UINT64_MAX;
  for (const auto* c : pm) first_sample = std::min(first_sample, c->start);
  EXPECT_GE(windows[0].begin, window_open);  // not started before the window
  EXPECT_LT(windows[0].begin, window_open + 50'000'000);
  EXPECT_GE(first_sample, window_open);
  EXPECT_LT(first_sample, window_open + 60'000'000) << (first_sample - window_open) / 1e6 << " ms";

  // Both halves in one report, and the counters' figures.
  auto analysis = RunCommand(absl::StrCat(kCli, " analyze ", trace, " 2>&1"));
  ASSERT_EQ(analysis.exit_code, 0) << analysis.output;
  EXPECT_TRUE(absl::StrContains(analysis.output, "replay_")) << analysis.output;
  auto stats = RunCommand(absl::StrCat(kCli, " stats --report gpu_metrics ", trace, " 2>&1"));
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_TRUE(absl::StrContains(stats.output, kSmActive)) << stats.output;
}

}  // namespace
}  // namespace cuscope
