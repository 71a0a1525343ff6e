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

TEST(ProfileOptionsTest, ProgramMayFollowWithoutDoubleDash) {
  auto p = ParseProfileArgs({"-q", "./app", "-o", "x"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->program, (std::vector<std::string>{"./app", "-o", "x"}));
  EXPECT_EQ(p->env.at("CUSCOPE_QUIET"), "1");
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

TEST(ProfileOptionsTest, Help) {
  auto p = ParseProfileArgs({"--help"});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->help);
}

}  // namespace
}  // namespace cuscope::cli
