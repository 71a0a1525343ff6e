// What the command prints when its input is wrong, run as a user runs it: one `cuscope:` line that
// names the file once, and nothing of the libraries' own above it.
#include <sys/wait.h>

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::cli {
namespace {

struct Result {
  int exit_code = -1;
  std::string err;
};

// Runs the command; its standard error (standard output is dropped).
Result RunCli(const std::string& args) {
  Result r;
  FILE* p = ::popen(absl::StrCat(CUSCOPE_CLI, " ", args, " 2>&1 >/dev/null").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), p)) > 0) r.err.append(buffer.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++count;
  return count;
}

TEST(ErrorLinesTest, AMissingFileIsNamedOnceByEveryCommand) {
  const std::string missing = "/nonexistent/run_42.cuscope";
  const std::string real = testing::SyntheticTrace().Write();
  for (const std::string& args :
       {absl::StrCat("analyze ", missing), absl::StrCat("stats --report cuda_api_sum ", missing),
        absl::StrCat("dump ", missing), absl::StrCat("export ", missing, " -o /tmp/never.pftrace"),
        absl::StrCat("diff ", missing, " ", real), absl::StrCat("diff ", real, " ", missing)}) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, absl::StrCat("cuscope: ", missing, ": No such file or directory\n")) << args;
  }
}

TEST(ErrorLinesTest, ADirectoryIsSaidToBeOne) {
  const Result r = RunCli(absl::StrCat("analyze ", ::testing::TempDir()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "a directory, not a trace file")) << r.err;
  EXPECT_EQ(Occurrences(r.err, "cuscope:"), 1u) << r.err;
}

// A string that is not UTF-8 makes protobuf log its own ERROR line while parsing; the reader
// reports the damage itself, so that line is not printed.
TEST(ErrorLinesTest, ProtobufsOwnLogLinesStayOut) {
  testing::SyntheticTrace s;
  s.Kernel(std::string("bad\xff\xfe" "name"), 0, 10);
  const std::string path = s.Write();
  const Result r = RunCli(absl::StrCat("analyze ", path));
  EXPECT_FALSE(absl::StrContains(r.err, "libprotobuf")) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "[libprotobuf")) << r.err;
  EXPECT_LE(Occurrences(r.err, "cuscope:"), 2u) << r.err;
}

// Chrome JSON of a large trace is said to be large before the export starts (a 200 MB file, sparse:
// the warning comes from its size, the export then refuses its bytes); a small one exports quietly.
TEST(ErrorLinesTest, ChromeJsonOfALargeTraceIsWarnedOfFirst) {
  const std::string big = absl::StrCat(::testing::TempDir(), "/big_", ::getpid(), ".cuscope");
  ASSERT_EQ(std::system(absl::StrCat("truncate -s 200M ", big).c_str()), 0);
  const Result r = RunCli(absl::StrCat("export --format chrome-json ", big, " -o ", big, ".json"));
  EXPECT_TRUE(absl::StrContains(r.err, "cuscope: warning: the Chrome JSON of this 210 MB trace will be about 1.7 GB"))
      << r.err;
  EXPECT_LT(r.err.find("warning"), r.err.find("bad magic")) << r.err;
  std::remove(big.c_str());
  const std::string small = testing::SyntheticTrace().Write();
  const Result quiet = RunCli(absl::StrCat("export --format chrome-json -f ", small, " -o ", small, ".json"));
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_FALSE(absl::StrContains(quiet.err, "warning")) << quiet.err;
  std::remove((small + ".json").c_str());
}

}  // namespace
}  // namespace cuscope::cli
