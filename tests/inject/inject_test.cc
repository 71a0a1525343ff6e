#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a shell command, capturing stdout and stderr separately.
Result RunShell(const std::string& command) {
  const std::string err_file = ::testing::TempDir() + "/inject_err_" + std::to_string(::getpid());
  Result r;
  FILE* p = popen((command + " 2>" + err_file).c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  FILE* e = std::fopen(err_file.c_str(), "r");
  while (e != nullptr && (n = fread(buf, 1, sizeof(buf), e)) > 0) r.err.append(buf, n);
  if (e != nullptr) std::fclose(e);
  ::unlink(err_file.c_str());
  return r;
}

size_t CuscopeLines(const std::string& err) {
  size_t lines = 0;
  for (size_t p = 0; (p = err.find("cuscope: ", p)) != std::string::npos; ++p) {
    if (p == 0 || err[p - 1] == '\n') ++lines;
  }
  return lines;
}

// Preloaded into a program that never touches CUDA: on a machine without a GPU cuscope says so
// once; with one it writes an empty trace and says where. The program's output and exit code are
// its own either way.
TEST(InjectTest, PreloadedIntoAProgramWithoutCudaChangesNothing) {
  const std::string trace = ::testing::TempDir() + "/preload_nocuda_" + std::to_string(::getpid());
  const Result plain = RunShell("sh -c 'echo hello; echo to-stderr >&2; exit 3'");
  const Result r = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_OUTPUT=", trace,
                                    " sh -c 'echo hello; echo to-stderr >&2; exit 3'"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_TRUE(absl::StrContains(r.err, "to-stderr")) << r.err;
  EXPECT_EQ(CuscopeLines(r.err), 1u) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "cuscope: no NVIDIA driver") ||
              absl::StrContains(r.err, "cuscope: trace written to"))
      << r.err;
  ::unlink((trace + ".cuscope").c_str());
}

TEST(InjectTest, BadSettingIsOneLineNamingIt) {
  const Result r = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_BUFER_SIZE=4M sh -c 'echo hi'"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "hi\n");
  EXPECT_EQ(CuscopeLines(r.err), 1u) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "CUSCOPE_BUFER_SIZE")) << r.err;
}

TEST(InjectTest, BadMetricListIsOneLineNamingTheEntry) {
  const Result r =
      RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_METRICS=sol,speed sh -c 'echo hi'"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "hi\n");
  EXPECT_EQ(CuscopeLines(r.err), 1u) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "CUSCOPE_METRICS=sol,speed")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "\"speed\"")) << r.err;
}

}  // namespace
