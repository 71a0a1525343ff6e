#include "lib/cli/profile_options.h"

#include <gtest/gtest.h>

namespace cuscope::cli {
namespace {

TEST(ProfileOptionsTest, NsysStyleOptionsBecomeCollectorSettings) {
  auto p = ParseProfileArgs({"-o", "run_%p", "--delay", "2", "--duration=5", "-t", "kernel,memcpy", "-f",
                             "--capture-range", "cudaProfilerApi", "--", "python3", "train.py", "--epochs", "1"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->env.at("CUSCOPE_OUTPUT"), "run_%p");
  EXPECT_EQ(p->env.at("CUSCOPE_DELAY"), "2");
  EXPECT_EQ(p->env.at("CUSCOPE_DURATION"), "5");
  EXPECT_EQ(p->env.at("CUSCOPE_KINDS"), "kernel,memcpy");
  EXPECT_EQ(p->env.at("CUSCOPE_FORCE_OVERWRITE"), "1");
  EXPECT_EQ(p->env.at("CUSCOPE_CAPTURE_RANGE"), "cudaProfilerApi");
  EXPECT_EQ(p->program, (std::vector<std::string>{"python3", "train.py", "--epochs", "1"}));
}

TEST(ProfileOptionsTest, FlightRecorderOptions) {
  auto p = ParseProfileArgs({"--mode", "flight", "--flight-span", "10", "--flight-size=64", "-o", "srv_%n", "./server"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->env.at("CUSCOPE_MODE"), "flight");
  EXPECT_EQ(p->env.at("CUSCOPE_FLIGHT_SPAN"), "10");
  EXPECT_EQ(p->env.at("CUSCOPE_FLIGHT_SIZE"), "64");
  // Checked as the collector will check them, before anything runs.
  EXPECT_FALSE(ParseProfileArgs({"--flight-span", "10", "./server"}).ok());
  EXPECT_FALSE(ParseProfileArgs({"--mode", "flight", "--flight-size", "0", "./server"}).ok());
}

TEST(ProfileOptionsTest, ProgramMayFollowWithoutDoubleDash) {
  auto p = ParseProfileArgs({"-q", "./app", "-o", "x"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->program, (std::vector<std::string>{"./app", "-o", "x"}));
  EXPECT_EQ(p->env.at("CUSCOPE_QUIET"), "1");
}

TEST(ProfileOptionsTest, ForceOverwriteTakesTrueOrFalseAndNeverRunsThemAsTheProgram) {
  auto on = ParseProfileArgs({"--force-overwrite", "true", "./app", "-f"});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->env.at("CUSCOPE_FORCE_OVERWRITE"), "1");
  EXPECT_EQ(on->program, (std::vector<std::string>{"./app", "-f"}));
  auto off = ParseProfileArgs({"-f", "false", "python3", "x.py"});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->env.at("CUSCOPE_FORCE_OVERWRITE"), "0");
  EXPECT_EQ(off->program, (std::vector<std::string>{"python3", "x.py"}));
  auto inline_off = ParseProfileArgs({"--force-overwrite=false", "./app"});
  ASSERT_TRUE(inline_off.ok()) << inline_off.status();
  EXPECT_EQ(inline_off->env.at("CUSCOPE_FORCE_OVERWRITE"), "0");
  EXPECT_FALSE(ParseProfileArgs({"--force-overwrite=maybe", "./app"}).ok());
  // The program true itself, after "--".
  auto program_true = ParseProfileArgs({"-f", "--", "true"});
  ASSERT_TRUE(program_true.ok()) << program_true.status();
  EXPECT_EQ(program_true->program, (std::vector<std::string>{"true"}));
}

TEST(ProfileOptionsTest, EveryValueOptionTakesItsValueInline) {
  auto p = ParseProfileArgs({"--output=run_%r", "--trace=kernel,nvtx", "--duration=4", "--delay=1", "./app"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->env.at("CUSCOPE_OUTPUT"), "run_%r");
  EXPECT_EQ(p->env.at("CUSCOPE_KINDS"), "kernel,nvtx");
  EXPECT_EQ(p->env.at("CUSCOPE_DURATION"), "4");
  EXPECT_EQ(p->env.at("CUSCOPE_DELAY"), "1");
  auto monitor = ParseProfileArgs({"--mode=monitor", "--monitor-interval=2", "./server"});
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  EXPECT_EQ(monitor->env.at("CUSCOPE_MODE"), "monitor");
  EXPECT_EQ(monitor->env.at("CUSCOPE_MONITOR_INTERVAL"), "2");
}

TEST(ProfileOptionsTest, MistakesAreReportedBeforeAnythingRuns) {
  EXPECT_FALSE(ParseProfileArgs({"--", }).ok());
  EXPECT_FALSE(ParseProfileArgs({"--bogus", "./app"}).ok());
  EXPECT_FALSE(ParseProfileArgs({"-o"}).ok());
  auto kinds = ParseProfileArgs({"-t", "kernels", "./app"});
  ASSERT_FALSE(kinds.ok());
  EXPECT_NE(std::string(kinds.status().message()).find("kernels"), std::string::npos);
  EXPECT_FALSE(ParseProfileArgs({"--delay", "soon", "./app"}).ok());
}

TEST(ProfileOptionsTest, NcuStyleSelectionBecomesMetricSettings) {
  auto p = ParseProfileArgs({"--metrics", "sol,occupancy", "-k", "regex:gemm|fma", "--launch-skip=3",
                             "--launch-count", "4", "--per-kernel-count", "2", "./app"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->env.at("CUSCOPE_METRICS"), "sol,occupancy");
  EXPECT_EQ(p->env.at("CUSCOPE_KERNEL_NAME"), "regex:gemm|fma");
  EXPECT_EQ(p->env.at("CUSCOPE_LAUNCH_SKIP"), "3");
  EXPECT_EQ(p->env.at("CUSCOPE_LAUNCH_COUNT"), "4");
  EXPECT_EQ(p->env.at("CUSCOPE_PER_KERNEL_COUNT"), "2");
}

TEST(ProfileOptionsTest, MetricMistakesAreReportedBeforeAnythingRuns) {
  auto set = ParseProfileArgs({"--metrics", "sol,speed", "./app"});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(std::string(set.status().message()).find("speed"), std::string::npos);
  auto regex = ParseProfileArgs({"--metrics", "sol", "-k", "regex:(", "./app"});
  ASSERT_FALSE(regex.ok());
  EXPECT_NE(std::string(regex.status().message()).find("regex"), std::string::npos);
  auto no_metrics = ParseProfileArgs({"--launch-count", "2", "./app"});
  ASSERT_FALSE(no_metrics.ok());
  EXPECT_NE(std::string(no_metrics.status().message()).find("CUSCOPE_METRICS"), std::string::npos);
}

TEST(ProfileOptionsTest, Help) {
  auto p = ParseProfileArgs({"--help"});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->help);
}

TEST(ProfileOptionsTest, TopDownWithAndWithoutACount) {
  auto p = ParseProfileArgs({"--duration", "5", "--top-down", "python3", "train.py"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->env.at("CUSCOPE_TOP_DOWN"), "3");
  auto five = ParseProfileArgs({"--duration=5", "--top-down=5", "--top-down-launches", "2", "--", "./app"});
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_EQ(five->env.at("CUSCOPE_TOP_DOWN"), "5");
  EXPECT_EQ(five->env.at("CUSCOPE_TOP_DOWN_LAUNCHES"), "2");
  // No window that ends: refused before the program runs.
  EXPECT_FALSE(ParseProfileArgs({"--top-down", "./app"}).ok());
}

TEST(ProfileOptionsTest, GpuMetricsDevicesAndReplayMode) {
  auto p = ParseProfileArgs({"--gpu-metrics-devices", "none", "--replay-mode=kernel", "./app"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->env.at("CUSCOPE_GPU_METRICS_DEVICES"), "none");
  EXPECT_EQ(p->env.at("CUSCOPE_REPLAY_MODE"), "kernel");
  auto all = ParseProfileArgs({"--gpu-metrics-devices=all", "--gpu-metrics-frequency", "2000", "./app"});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->env.at("CUSCOPE_GPU_METRICS_DEVICES"), "all");
  EXPECT_EQ(all->env.at("CUSCOPE_GPU_METRICS_FREQUENCY"), "2000");
  EXPECT_FALSE(ParseProfileArgs({"--gpu-metrics-devices", "gpu0", "./app"}).ok());
  EXPECT_FALSE(ParseProfileArgs({"--replay-mode", "application", "./app"}).ok());
}

}  // namespace
}  // namespace cuscope::cli
