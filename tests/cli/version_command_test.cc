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

}  // namespace
}  // namespace cuscope::cli
