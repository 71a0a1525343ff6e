#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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

// A hostile kernel-name pattern in the environment (huge, or deeply nested) is read before the
// program's main: one line naming the setting, and the program runs as without cuscope.
TEST(InjectTest, HugeOrNestedKernelRegexIsOneLineAndTheProgramRuns) {
  for (const std::string& pattern :
       {std::string(90000, 'a'), std::string(20000, '(') + "a" + std::string(20000, ')')}) {
    const Result r = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_METRICS=sol CUSCOPE_KERNEL_NAME='regex:",
                                           pattern, "' sh -c 'echo hi; exit 4'"));
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_EQ(r.out, "hi\n");
    EXPECT_EQ(CuscopeLines(r.err), 1u) << r.err.substr(0, 500);
    EXPECT_TRUE(absl::StrContains(r.err, "CUSCOPE_KERNEL_NAME")) << r.err.substr(0, 500);
    EXPECT_LT(r.err.size(), 2000u);  // the pattern is not echoed back
  }
}

// Preloaded into a program with its own protobuf (Debian's shared library), cuscope brings no
// protobuf, abseil or RE2 of its own into the process and exports none of their symbols: the
// program's calls keep going to its own copy.
TEST(InjectTest, ProgramKeepsItsOwnProtobuf) {
  const Result r = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_QUIET=1 ",
                                         PROTOBUF_HOST_FILE, " ", CUSCOPE_LIBRARY_FILE));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "round trip ok\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "cuscope loaded: yes\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "cuscope exports its API: yes\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "cuscope exports protobuf: no\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "cuscope exports abseil: no\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "protobuf served by ")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, "protobuf served by " CUSCOPE_LIBRARY_FILE)) << r.out;
  // The only such library mapped is the program's own libprotobuf.
  size_t mapped = 0;
  for (size_t p = 0; (p = r.out.find("mapped ", p)) != std::string::npos; ++p) ++mapped;
  EXPECT_EQ(mapped, 1u) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "libprotobuf.so.32\n")) << r.out;
}

// The dynamic section of each binary cuscope ships: no library of protobuf, abseil or RE2 needed,
// and a search path with no empty entry (an empty entry is the working directory: a library planted
// next to a trace would run inside `cuscope analyze`), only absolute or $ORIGIN-relative folders.
void ExpectSafeDynamicSection(const std::string& file) {
  const Result r = RunShell("readelf -d " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* lib : {"libprotobuf", "libabsl_", "libre2"}) {
    EXPECT_FALSE(absl::StrContains(r.out, lib)) << file << " needs " << lib << ":\n" << r.out;
  }
  for (const absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (!absl::StrContains(line, "(RUNPATH)") && !absl::StrContains(line, "(RPATH)")) continue;
    const size_t open = line.find('[');
    const size_t close = line.rfind(']');
    ASSERT_NE(open, absl::string_view::npos) << line;
    const absl::string_view path = line.substr(open + 1, close - open - 1);
    for (const absl::string_view entry : absl::StrSplit(path, ':')) {
      EXPECT_FALSE(entry.empty()) << file << ": empty entry in " << line;
      EXPECT_TRUE(absl::StartsWith(entry, "/") || absl::StartsWith(entry, "$ORIGIN"))
          << file << ": relative entry \"" << entry << "\" in " << line;
    }
  }
}

TEST(InjectTest, LibraryNeedsNoSharedProtobufAndSearchesNoRelativeFolder) {
  ExpectSafeDynamicSection(CUSCOPE_LIBRARY_FILE);
}

TEST(InjectTest, CommandNeedsNoSharedProtobufAndSearchesNoRelativeFolder) {
  ExpectSafeDynamicSection(CUSCOPE_CLI_FILE);
}

}  // namespace
