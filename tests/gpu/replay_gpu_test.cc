// Kernel replay never changes a program's results, and the one-run top-down profiles the hot
// kernels of its timeline window after the window closes. Both on kernels that change state:
// atomics, in-place updates and accumulation across launches (tests/gpu/replay_app.cu).
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/core/trace.h"
#include "tests/gpu/gpu_test_support.h"

namespace cuscope {
namespace {

using testing::ParseKeyValues;
using testing::RunCommand;
using testing::TempTracePath;

const std::string kCli = testing::BuildTree::Cli();
const std::string kApp = testing::BuildTree::Bin("replay_app");
constexpr const char* kResults[] = {"hash_histogram", "hash_inplace", "hash_accumulate", "counter"};

class ReplayGpuTest : public testing::GpuTest {};

void ExpectSameResults(const std::string& plain_output, const std::string& profiled_output) {
  auto want = ParseKeyValues(plain_output), got = ParseKeyValues(profiled_output);
  for (const char* key : kResults) {
    ASSERT_FALSE(want[key].empty()) << key << " missing from\n" << plain_output;
    EXPECT_EQ(got[key], want[key]) << key;
  }
}

TEST_F(ReplayGpuTest, EveryLaunchReplayedStillGivesBitIdenticalResults) {
  const std::string trace = TempTracePath("replay_all");
  auto plain = RunCommand(absl::StrCat(kApp, " --iterations 4"));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  // sol needs several passes: each launch runs once per pass, memory restored in between.
  auto run = RunCommand(absl::StrCat(kCli, " profile --metrics sol --per-kernel-count 0 --replay-mode kernel -o ",
                                     trace, " -- ", kApp, " --iterations 4 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ExpectSameResults(plain.output, run.output);

  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  std::map<std::string, int> profiled;
  for (const auto& m : t->metrics) {
    EXPECT_GT(m.pass_count, 1u) << "one pass needs no replay; the test would prove nothing";
    EXPECT_EQ(m.replay_mode, v1::REPLAY_MODE_KERNEL);
    ++profiled[t->dict.str(m.kernel_name)];
  }
  for (const char* k : {"replay_histogram", "replay_inplace", "replay_accumulate", "replay_counter"}) {
    int n = 0;
    for (const auto& [name, count] : profiled) {
      if (absl::StrContains(name, k)) n += count;
    }
    EXPECT_EQ(n, 4) << k;
  }
}

struct Shape {
  std::string name;
  std::array<uint32_t, 3> grid, block;
  bool operator<(const Shape& o) const { return std::tie(name, grid, block) < std::tie(o.name, o.grid, o.block); }
};

TEST_F(ReplayGpuTest, TopDownProfilesTheWindowsHottestKernelsAfterTheWindow) {
  const std::string trace = TempTracePath("top_down");
  const std::string args = " --iterations 12 --window 6 --pause-ms 800";
  auto plain = RunCommand(kApp + args);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  auto run = RunCommand(absl::StrCat(kCli, " profile --top-down=2 --top-down-launches 2 -c cudaProfilerApi ",
                                     "--gpu-metrics-devices none -o ", trace, " -- ", kApp, args, " 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ExpectSameResults(plain.output, run.output);
  EXPECT_TRUE(absl::StrContains(run.output, "top-down: collecting")) << run.output;

  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->top_down.size(), 1u);
  const auto& choice = t->top_down[0];
  ASSERT_EQ(choice.kernels_size(), 2);

  // The choice is the window's two hottest kernels by the trace's own kernel rows.
  std::vector<core::HotKernelChoice> totals;
  uint64_t window_end = 0;
  for (const auto& w : t->windows) {
    if (w.kind() == v1::WINDOW_KIND_TIMELINE && w.end_ns() != 0) window_end = std::max<uint64_t>(window_end, w.end_ns());
  }
  ASSERT_GT(window_end, 0u);
  for (const auto& k : t->kernels) {
    const auto& sig = t->dict.signature(k.signature);
    core::HotKernelChoice c;
    c.name = t->dict.str(sig.name());
    c.shape.grid = {static_cast<uint32_t>(sig.grid_x()), static_cast<uint32_t>(sig.grid_y()),
                    static_cast<uint32_t>(sig.grid_z())};
    c.shape.block = {static_cast<uint32_t>(sig.block_x()), static_cast<uint32_t>(sig.block_y()),
                     static_cast<uint32_t>(sig.block_z())};
    c.total_ns = k.end - k.start;
    c.launches = 1;
    totals.push_back(c);
    EXPECT_LE(k.end, window_end + 1000000) << "a kernel row after the window: the timeline should be off";
  }
  const auto expected = core::SelectHotKernels(totals, 2);
  ASSERT_EQ(expected.size(), 2u);
  std::set<Shape> chosen;
  for (int i = 0; i < 2; ++i) {
    const auto& h = choice.kernels(i);
    EXPECT_EQ(t->dict.str(h.name()), expected[i].name);
    EXPECT_EQ(h.launches(), 6u);
    chosen.insert({t->dict.str(h.name()), {h.grid_x(), h.grid_y(), h.grid_z()}, {h.block_x(), h.block_y(), h.block_z()}});
  }

  // Two launches of each chosen kernel were profiled, after the window, and nothing else.
  std::map<Shape, int> profiled;
  for (const auto& m : t->metrics) {
    Shape s{t->dict.str(m.kernel_name), m.grid, m.block};
    EXPECT_TRUE(chosen.count(s)) << s.name << " was profiled but not chosen";
    ++profiled[s];
  }
  for (const auto& s : chosen) EXPECT_EQ(profiled[s], 2) << s.name;
  for (const auto& w : t->windows) {
    if (w.kind() == v1::WINDOW_KIND_METRICS) {
      EXPECT_GT(w.start_ns(), window_end);
    }
  }
}

TEST_F(ReplayGpuTest, TopDownSaysSoWhenTheHotKernelsNeverLaunchAgain) {
  const std::string trace = TempTracePath("top_down_never");
  auto run = RunCommand(absl::StrCat(kCli, " profile --top-down=1 -c cudaProfilerApi --gpu-metrics-devices none -o ",
                                     trace, " -- ", kApp, " --iterations 3 --window 3 2>&1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto t = core::LoadTrace(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->metrics.empty());
  auto analysis = RunCommand(absl::StrCat(kCli, " analyze ", trace, " 2>&1"));
  ASSERT_EQ(analysis.exit_code, 0) << analysis.output;
  EXPECT_TRUE(absl::StrContains(analysis.output, "did not launch again")) << analysis.output;
}

}  // namespace
}  // namespace cuscope
