#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <climits>
#include <cstdlib>
#include <fstream>
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

// Preloaded into a program that never touches CUDA: nothing of cuscope's at all (no line, no
// file), only the driver's injection hook armed, which children inherit.
TEST(InjectTest, PreloadedIntoAProgramWithoutCudaChangesNothing) {
  const std::string trace = ::testing::TempDir() + "/preload_nocuda_" + std::to_string(::getpid());
  const Result plain = RunShell("sh -c 'echo hello; echo to-stderr >&2; exit 3'");
  const Result r = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_OUTPUT=", trace,
                                    " sh -c 'echo hello; echo to-stderr >&2; exit 3'"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err, plain.err);
  EXPECT_FALSE(std::ifstream(trace + ".cuscope").good());
  // Even a bad setting says nothing where CUDA is never used.
  const Result bad = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_BUFER_SIZE=4M sh -c 'echo hi'"));
  EXPECT_EQ(bad.out, "hi\n");
  EXPECT_EQ(bad.err, "");
}

TEST(InjectTest, PreloadArmsTheDriversInjectionHookUnlessAnotherToolHasIt) {
  const Result r =
      RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " sh -c 'echo \"$CUDA_INJECTION64_PATH\"'"));
  char resolved[PATH_MAX];
  ASSERT_NE(::realpath(CUSCOPE_LIBRARY_FILE, resolved), nullptr);
  EXPECT_EQ(r.out, absl::StrCat(resolved, "\n"));
  // Another tool's library stays the driver's; cuscope then starts at once, as before (and says
  // so here, where no driver can be loaded).
  const Result other = RunShell(absl::StrCat("CUDA_INJECTION64_PATH=/opt/other/libtool.so LD_PRELOAD=",
                                             CUSCOPE_LIBRARY_FILE, " sh -c 'echo \"$CUDA_INJECTION64_PATH\"'"));
  EXPECT_EQ(other.out, "/opt/other/libtool.so\n");
  EXPECT_TRUE(absl::StrContains(other.err, "cuscope: no NVIDIA driver")) << other.err;
  // Once the driver calls in, the session starts as "preload": here, where there is no GPU, the
  // one line that says so (none with CUSCOPE_QUIET).
  const Result started = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " ", DRIVER_INJECTION_FILE));
  EXPECT_TRUE(absl::StrContains(started.out, "InitializeInjection returned 1")) << started.out;
  EXPECT_EQ(CuscopeLines(started.err), 1u) << started.err;
  const Result quiet =
      RunShell(absl::StrCat("CUSCOPE_QUIET=1 LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " ", DRIVER_INJECTION_FILE));
  EXPECT_EQ(CuscopeLines(quiet.err), 0u) << quiet.err;
}

// The C API from a C89 program: what needs a session says so through cuscope_last_error, a stop
// with nothing to stop succeeds (as Session::Stop), and a start that fails is one line unless
// CUSCOPE_QUIET (as Session::Start). On a machine with a GPU the start succeeds instead.
TEST(InjectTest, CApiFromC89AgreesWithTheCppApi) {
  const std::string trace = ::testing::TempDir() + "/c_api_" + std::to_string(::getpid());
  const Result r = RunShell(absl::StrCat("CUSCOPE_OUTPUT=", trace, " ", C_API_PROGRAM_FILE));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "stop_without_session=0 error=none")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "flush_without_session=1 error=set")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "snapshot_without_session=1 error=set")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "mark_step_without_session=1 error=set")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "describe_length_over_buffer=1 terminated=1")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "describe_null_buffer=1")) << r.out;
  if (absl::StrContains(r.out, "start=1")) {
    EXPECT_TRUE(absl::StrContains(r.out, "start=1 error=set")) << r.out;
    EXPECT_EQ(CuscopeLines(r.err), 1u) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "cuscope: no NVIDIA driver")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "profiling is off")) << r.err;
    const Result quiet = RunShell(absl::StrCat("CUSCOPE_QUIET=1 CUSCOPE_OUTPUT=", trace, " ", C_API_PROGRAM_FILE));
    EXPECT_EQ(quiet.exit_code, 0);
    EXPECT_TRUE(absl::StrContains(quiet.out, "start=1 error=set")) << quiet.out;
    EXPECT_EQ(CuscopeLines(quiet.err), 0u) << quiet.err;
  } else {
    EXPECT_TRUE(absl::StrContains(r.out, "start=0")) << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, "stop=0")) << r.out;
    ::unlink((trace + ".cuscope").c_str());
  }
}

// `cuscope help COMMAND` is `cuscope COMMAND --help`, for every command.
TEST(InjectTest, HelpNamesACommandsOptions) {
  for (const char* command : {"profile", "analyze", "stats", "report", "diff", "log", "dump", "export", "metrics"}) {
    const Result help = RunShell(absl::StrCat(CUSCOPE_CLI_FILE, " help ", command));
    const Result flag = RunShell(absl::StrCat(CUSCOPE_CLI_FILE, " ", command, " --help"));
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_FALSE(help.out.empty()) << command;
    EXPECT_EQ(help.out, flag.out) << command;
  }
  const Result unknown = RunShell(absl::StrCat(CUSCOPE_CLI_FILE, " help profil"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "unknown command 'profil'")) << unknown.err;
  const Result two = RunShell(absl::StrCat(CUSCOPE_CLI_FILE, " help profile analyze"));
  EXPECT_EQ(two.exit_code, 2);
}

TEST(InjectTest, BadSettingIsOneLineNamingIt) {
  const Result r = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_BUFER_SIZE=4M ",
                                         DRIVER_INJECTION_FILE, " 'echo hi'"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "hi\n")) << r.out;
  EXPECT_EQ(CuscopeLines(r.err), 1u) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "CUSCOPE_BUFER_SIZE")) << r.err;
}

TEST(InjectTest, BadMetricListIsOneLineNamingTheEntry) {
  const Result r = RunShell(absl::StrCat("LD_PRELOAD=", CUSCOPE_LIBRARY_FILE, " CUSCOPE_METRICS=sol,speed ",
                                         DRIVER_INJECTION_FILE, " 'echo hi'"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "hi\n")) << r.out;
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
                                           pattern, "' ", DRIVER_INJECTION_FILE, " 'echo hi; exit 4'"));
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_TRUE(absl::StrContains(r.out, "hi\n")) << r.out;
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
