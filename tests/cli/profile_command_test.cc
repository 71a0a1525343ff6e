#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
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

// `--force-overwrite false`, as nsys spells it, keeps an existing file: refused before the program
// runs (the program would leave a mark), and `-f true` replaces it and runs the program after it.
TEST(ProfileCommandTest, ForceOverwriteFalseRefusesAnExistingFileBeforeTheProgramRuns) {
  const std::string dir = ::testing::TempDir();
  const std::string out = dir + "/profile_existing.cuscope", mark = dir + "/profile_ran";
  std::remove(mark.c_str());
  std::FILE* existing = std::fopen(out.c_str(), "w");
  ASSERT_NE(existing, nullptr);
  std::fclose(existing);
  const std::string touch = "touch " + mark;
  ::testing::internal::CaptureStderr();
  const int refused = RunProfile({"-q", "--force-overwrite", "false", "-o", out, "sh", "-c", touch});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(refused, 2);
  EXPECT_NE(err.find("already exists"), std::string::npos) << err;
  EXPECT_NE(::access(out.c_str(), F_OK), -1);
  EXPECT_EQ(::access(mark.c_str(), F_OK), -1) << "the program did not run";
  ::testing::internal::CaptureStderr();
  const int ran = RunProfile({"-q", "-f", "true", "-o", out, "sh", "-c", touch});
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(::access(mark.c_str(), F_OK), 0) << "sh ran, not a program named true";
}

// A mistake is one line and a pointer to the options, not the whole usage.
TEST(ProfileCommandTest, AMistakeIsOneLineAndAPointerToTheHelp) {
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int rc = RunProfile({"--stacks", "often", "--", "/bin/true"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err,
            "cuscope: CUSCOPE_STACKS=often: not a stack sampling: expected none, all, every:N (one launch in N) or "
            "first:K (the first K launches of each kernel)\n(cuscope profile --help lists the options)\n");
  EXPECT_EQ(out, "");
}

TEST(ProfileCommandTest, AnUnknownUnwinderIsOneLine) {
  ::testing::internal::CaptureStderr();
  const int rc = RunProfile({"--stacks", "all", "--unwinder", "frame-pointers", "--", "/bin/true"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err,
            "cuscope: CUSCOPE_UNWINDER=frame-pointers: expected libunwind or libgcc\n"
            "(cuscope profile --help lists the options)\n");
}

TEST(ProfileCommandTest, AnUnknownWayOfRecordingTheLeanCallsIsOneLine) {
  ::testing::internal::CaptureStderr();
  const int rc = RunProfile({"--lean-calls", "sometimes", "--", "/bin/true"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err,
            "cuscope: CUSCOPE_LEAN_CALLS=sometimes: expected callbacks or records\n"
            "(cuscope profile --help lists the options)\n");
}

}  // namespace
}  // namespace cuscope::cli
