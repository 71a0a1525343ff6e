// Runs a `cuscope` subcommand's function in the test process and captures what it prints, as a
// user would see it: exit code, standard output and standard error.
#ifndef CUSCOPE_TESTS_CLI_CAPTURE_COMMAND_H_
#define CUSCOPE_TESTS_CLI_CAPTURE_COMMAND_H_

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "lib/cli/commands.h"

namespace cuscope::cli::test_support {

struct Outcome {
  int code;
  std::string out, err;
};

inline Outcome Capture(int (*command)(const Args&), const Args& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = command(args);
  std::fflush(stdout);
  std::fflush(stderr);
  return Outcome{code, ::testing::internal::GetCapturedStdout(), ::testing::internal::GetCapturedStderr()};
}

}  // namespace cuscope::cli::test_support

#endif  // CUSCOPE_TESTS_CLI_CAPTURE_COMMAND_H_
