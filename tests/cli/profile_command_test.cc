#include <dlfcn.h>

#include <string>

#include <gtest/gtest.h>

#include "lib/cli/commands.h"

namespace cuscope::cli {
namespace {

// The program's exit code comes back unchanged; without a driver cuscope says, once, that the
// program runs unprofiled.
TEST(ProfileCommandTest, ProgramRunsWithItsExitCodeAndNoDriverIsSaidOnce) {
  const bool have_driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != nullptr;
  const std::string out = ::testing::TempDir() + "/profile_cmd_%p";
  ::testing::internal::CaptureStderr();
  const int rc = RunProfile({"-f", "-o", out, "--", "sh", "-c", "exit 3"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 3);
  const bool said = err.find("cuscope: no NVIDIA driver on this machine") != std::string::npos;
  EXPECT_EQ(said, !have_driver) << err;
}

TEST(ProfileCommandTest, MissingProgramIsExit127LikeAShell) {
  ::testing::internal::CaptureStderr();
  const int rc = RunProfile({"-q", "-f", "-o", ::testing::TempDir() + "/x", "--", "/nonexistent/program"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 127);
  EXPECT_NE(err.find("cuscope: cannot run /nonexistent/program"), std::string::npos) << err;
}

}  // namespace
}  // namespace cuscope::cli
