// Every file `cuscope` writes (report, export, the tuning log), through its command: a symbolic
// link at the output path never has its target written, and an existing file is replaced only with
// -f/--force-overwrite.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "tests/cli/capture_command.h"
#include "tests/core/file_checks.h"
#include "tests/report/report_test_traces.h"

namespace cuscope::cli {
namespace {

using test_support::Capture;
using test_support::Outcome;

using file_checks::IsLink;
using file_checks::IsRegular;
using file_checks::Read;

std::string NewDir() { return file_checks::NewDir("cuscope_cli_outputs"); }

// Names in `dir` that look like a temporary file left behind.
std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> names;
  for (const std::string& n : file_checks::Entries(dir)) {
    if (absl::EndsWith(n, ".tmp")) names.push_back(n);
  }
  return names;
}

// A file an attacker would like overwritten, and a link to it at `link`.
std::string PlantLink(const std::string& dir, const std::string& link) {
  const std::string target = dir + "/precious";
  std::ofstream(target, std::ios::binary) << "precious contents\n";
  EXPECT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  return target;
}

TEST(ReportOutputTest, AnExistingFileIsRefusedWithoutForce) {
  const std::string trace = testing::LaunchBoundRun();
  const std::string dir = NewDir(), out = dir + "/run.html";
  std::ofstream(out) << "keep me\n";
  const Outcome refused = Capture(RunReport, {trace, "-o", out});
  EXPECT_EQ(refused.code, 2);
  EXPECT_TRUE(absl::StrContains(refused.err, out)) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "--force-overwrite")) << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_EQ(Read(out), "keep me\n");
  EXPECT_EQ(Capture(RunReport, {trace, "-o", out, "-f"}).code, 0);
  EXPECT_TRUE(absl::StartsWith(Read(out), "<!DOCTYPE html>"));
  EXPECT_EQ(Capture(RunReport, {trace, "--force-overwrite", "-o", out}).code, 0);
  std::ofstream(out) << "keep me\n";
  EXPECT_EQ(Capture(RunReport, {trace, "--force-overwrite", "false", "-o", out}).code, 2)
      << "false, as nsys takes it, keeps the file";
  EXPECT_EQ(Read(out), "keep me\n");
  EXPECT_EQ(Capture(RunReport, {trace, "--force-overwrite=true", "--output=" + out}).code, 0);
  EXPECT_TRUE(absl::StartsWith(Read(out), "<!DOCTYPE html>"));
  EXPECT_TRUE(Leftovers(dir).empty());
}

TEST(ReportOutputTest, ALinkAtTheOutputIsNeverFollowed) {
  const std::string trace = testing::LaunchBoundRun();
  const std::string dir = NewDir(), out = dir + "/run.html";
  const std::string target = PlantLink(dir, out);
  EXPECT_EQ(Capture(RunReport, {trace, "-o", out}).code, 2);
  EXPECT_EQ(Read(target), "precious contents\n");
  EXPECT_TRUE(IsLink(out));
  EXPECT_EQ(Capture(RunReport, {trace, "-o", out, "-f"}).code, 0);
  EXPECT_EQ(Read(target), "precious contents\n");
  EXPECT_TRUE(IsRegular(out));
  EXPECT_TRUE(absl::StartsWith(Read(out), "<!DOCTYPE html>"));
  EXPECT_TRUE(Leftovers(dir).empty());
}

TEST(ReportOutputTest, TheDefaultOutputIsNeverFollowedEither) {
  const std::string trace = testing::LaunchBoundRun();  // <dir>/<name>.cuscope: report writes ./<name>.html
  std::string base = trace.substr(trace.find_last_of('/') + 1);
  base = base.substr(0, base.size() - std::string(".cuscope").size()) + ".html";
  const std::string dir = NewDir();
  const std::string target = PlantLink(dir, dir + "/" + base);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::chdir(dir.c_str()), 0);
  const Outcome refused = Capture(RunReport, {trace});
  const Outcome forced = Capture(RunReport, {trace, "-f"});
  ASSERT_EQ(::chdir(cwd), 0);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(Read(target), "precious contents\n");
  EXPECT_TRUE(IsRegular(dir + "/" + base));
  EXPECT_TRUE(Leftovers(dir).empty());
}

TEST(ExportOutputTest, ALinkAtTheOutputIsReplacedNotFollowed) {
  const std::string trace = testing::LaunchBoundRun();
  for (const char* format : {"perfetto", "chrome-json"}) {
    const std::string dir = NewDir(), out = dir + "/run.out";
    const std::string target = PlantLink(dir, out);
    const Outcome refused = Capture(RunExport, {"--format", format, trace, "-o", out});
    EXPECT_EQ(refused.code, 2);
    EXPECT_TRUE(absl::StrContains(refused.err, "--force-overwrite")) << refused.err;
    EXPECT_EQ(Read(target), "precious contents\n");
    const Outcome forced = Capture(RunExport, {"--format", format, trace, "-o", out, "-f"});
    EXPECT_EQ(forced.code, 0) << forced.err;
    EXPECT_EQ(Read(target), "precious contents\n") << format;
    EXPECT_TRUE(IsRegular(out)) << format;
    EXPECT_GT(Read(out).size(), 100u);
    EXPECT_TRUE(Leftovers(dir).empty());
  }
}

TEST(LogOutputTest, AddRefusesALinkAndNeverAppendsThroughIt) {
  const std::string base = testing::LaunchBoundRun(), next = testing::FusedRun();
  for (const char* name : {"log.jsonl", "log.md"}) {
    const std::string dir = NewDir(), log = dir + "/" + name;
    const std::string target = PlantLink(dir, log);
    const Outcome r = Capture(RunLog, {"add", "--change", "fuse", base, next, "--file", log});
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(absl::StrContains(r.err, "symbolic link")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, log)) << r.err;
    EXPECT_EQ(Read(target), "precious contents\n");
    EXPECT_TRUE(IsLink(log));
    EXPECT_TRUE(Leftovers(dir).empty());
  }
}

TEST(LogOutputTest, AddKeepsTheEntriesAndLeavesARegularFile) {
  const std::string base = testing::LaunchBoundRun(), next = testing::FusedRun();
  const std::string dir = NewDir(), log = dir + "/log.jsonl";
  ASSERT_EQ(Capture(RunLog, {"add", "--change", "one", base, next, "--file", log}).code, 0);
  ASSERT_EQ(Capture(RunLog, {"add", "--change", "two", base, next, "--file", log}).code, 0);
  const std::string text = Read(log);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_TRUE(absl::StrContains(text, "\"one\"") && absl::StrContains(text, "\"two\"")) << text;
  EXPECT_TRUE(IsRegular(log));
  const std::string fifo = dir + "/fifo.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Outcome r = Capture(RunLog, {"add", "--change", "x", base, next, "--file", fifo});  // must not block
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "not a regular file")) << r.err;
  EXPECT_TRUE(Leftovers(dir).empty());
}

}  // namespace
}  // namespace cuscope::cli
