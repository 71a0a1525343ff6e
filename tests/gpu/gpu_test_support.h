// Helpers for the GPU tests: is there a GPU, run a command and capture its output.
#ifndef CUSCOPE_TESTS_GPU_GPU_TEST_SUPPORT_H_
#define CUSCOPE_TESTS_GPU_GPU_TEST_SUPPORT_H_

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace cuscope::testing {

// True when the CUDA driver loads and reports at least one device.
bool HaveGpu();

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout
};

// Runs `command` through the shell and captures its stdout (stderr passes through).
CommandResult RunCommand(const std::string& command);

// key=value lines of a program's output.
std::map<std::string, std::string> ParseKeyValues(const std::string& output);

// The build folder: the parent of the folder holding this executable.
std::string BuildDirOfThisExecutable();

// A fresh path under the test temporary directory.
std::string TempTracePath(const std::string& stem);

// The fixture of every GPU test: skipped, and saying so, on a machine without a GPU.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveGpu()) GTEST_SKIP() << "no GPU on this machine";
  }
};

// What the build tree lays out around the test binaries (bin/, lib/, examples/), so a build folder
// copied to another machine finds its own programs.
struct BuildTree {
  static const std::string& Dir();      // BuildDirOfThisExecutable()
  static std::string Cli();             // bin/cuscope
  static std::string Library();         // lib/libcuscope.so
  static std::string Bin(const std::string& name);      // bin/NAME
  static std::string Example(const std::string& name);  // examples/example_NAME
};

}  // namespace cuscope::testing

#endif  // CUSCOPE_TESTS_GPU_GPU_TEST_SUPPORT_H_
