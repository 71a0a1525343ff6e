// `cuscope version` and the first line of `cuscope info` name the version CMake's project()
// declares, whatever it is, and the two agree.
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "tests/cli/capture_command.h"

namespace cuscope::cli {
namespace {

using test_support::Capture;
using test_support::Outcome;

TEST(VersionCommandTest, PrintsTheProjectVersion) {
  const Outcome version = Capture(RunVersion, {});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, std::string("cuscope ") + CUSCOPE_PROJECT_VERSION + " (trace format cuscope.v1)\n");
  EXPECT_EQ(version.err, "");
}

TEST(VersionCommandTest, InfoStartsWithTheSameLine) {
  const Outcome info = Capture(RunInfo, {});
  EXPECT_EQ(info.code, 0);
  EXPECT_TRUE(absl::StartsWith(info.out, Capture(RunVersion, {}).out)) << info.out;
}

// The libraries stacks use, as installed here by scripts/install_deps.sh (libunwind8, libdw1).
TEST(VersionCommandTest, InfoSaysWhichLibrariesStacksUse) {
  const Outcome info = Capture(RunInfo, {});
  EXPECT_NE(info.out.find("call stacks (--stacks): libunwind's unwinder (libunwind.so.8)\n"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("native source lines: read with elfutils' libdw.so.1\n"), std::string::npos) << info.out;
}

}  // namespace
}  // namespace cuscope::cli
