// The one creator of every file the command writes: never through a symbolic link, never over a
// file without overwrite, nothing left behind on an error.
#include "lib/core/output_file.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/core/file_checks.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cuscope::core {
namespace {

using file_checks::Entries;
using file_checks::IsLink;
using file_checks::IsRegular;
using file_checks::Read;

std::string NewDir() { return file_checks::NewDir("cuscope_output_file"); }

void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(OutputFileTest, CreatesANewFile) {
  const std::string dir = NewDir(), path = dir + "/out.txt";
  ASSERT_TRUE(WriteOutputFile(path, "hello", false).ok());
  EXPECT_EQ(Read(path), "hello");
  EXPECT_TRUE(IsRegular(path));
  EXPECT_EQ(Entries(dir).size(), 1u);
}

TEST(OutputFileTest, AnExistingFileIsRefusedWithoutOverwriteAndReplacedWithIt) {
  const std::string dir = NewDir(), path = dir + "/out.txt";
  Write(path, "old");
  const absl::Status refused = WriteOutputFile(path, "new", false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(absl::StrContains(refused.message(), path)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "-f/--force-overwrite")) << refused;
  EXPECT_EQ(Read(path), "old");
  ASSERT_TRUE(WriteOutputFile(path, "new", true).ok());
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(Entries(dir).size(), 1u);  // no temporary file left
}

TEST(OutputFileTest, ASymbolicLinkIsRefusedOrReplacedButItsTargetNeverWritten) {
  const std::string dir = NewDir(), target = dir + "/target", link = dir + "/out.txt";
  Write(target, "precious");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_FALSE(WriteOutputFile(link, "evil", false).ok());
  EXPECT_EQ(Read(target), "precious");
  EXPECT_TRUE(IsLink(link));
  ASSERT_TRUE(WriteOutputFile(link, "report", true).ok());
  EXPECT_EQ(Read(target), "precious");
  EXPECT_TRUE(IsRegular(link));
  EXPECT_EQ(Read(link), "report");
  EXPECT_EQ(Entries(dir).size(), 2u);
}

TEST(OutputFileTest, ADanglingLinkCreatesNothingWhereItPoints) {
  const std::string dir = NewDir(), target = dir + "/nowhere", link = dir + "/out.txt";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_FALSE(WriteOutputFile(link, "x", false).ok());
  EXPECT_NE(::access(target.c_str(), F_OK), 0);
  ASSERT_TRUE(WriteOutputFile(link, "x", true).ok());
  EXPECT_NE(::access(target.c_str(), F_OK), 0);
  EXPECT_TRUE(IsRegular(link));
}

TEST(OutputFileTest, AFailedReplaceLeavesNoTemporaryFile) {
  const std::string dir = NewDir(), path = dir + "/busy";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  Write(path + "/inside", "x");  // a directory that is not empty: rename() cannot replace it
  const absl::Status s = WriteOutputFile(path, "data", true);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), path)) << s;
  EXPECT_EQ(Entries(dir).size(), 1u);
  EXPECT_EQ(Read(path + "/inside"), "x");
}

TEST(OutputFileTest, DiscardAndAnUnclosedFileLeaveNothing) {
  const std::string dir = NewDir();
  for (const bool overwrite : {false, true}) {
    auto file = OutputFile::Create(dir + "/a", overwrite);
    ASSERT_TRUE(file.ok()) << file.status();
    (*file)->Append("half");
    (*file)->Discard();
    EXPECT_TRUE(Entries(dir).empty()) << overwrite;
    {
      auto dropped = OutputFile::Create(dir + "/b", overwrite);
      ASSERT_TRUE(dropped.ok());
      (*dropped)->Append("half");
    }
    EXPECT_TRUE(Entries(dir).empty()) << overwrite;
  }
}

// An export killed by SIGTERM or SIGINT (Ctrl-C) left its hidden temporary file (828 MB in the
// review). With the command's handlers the process still ends by the signal, and nothing is left:
// not the temporary file (overwrite), not the half-written file at the path (without).
TEST(OutputFileTest, ASignalThatEndsTheProcessLeavesNoPartialFile) {
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
    for (const bool overwrite : {true, false}) {
      const std::string dir = NewDir();
      const pid_t child = ::fork();
      if (child == 0) {
        RemovePartialOutputsOnSignals();
        auto file = OutputFile::Create(dir + "/trace.json", overwrite);
        if (!file.ok()) ::_exit(3);
        (*file)->Append(std::string(OutputFile::kFlushBytes * 2, 'x'));
        (*file)->MaybeFlush();
        ::raise(signal);
        ::_exit(4);  // not reached
      }
      int status = 0;
      ASSERT_EQ(::waitpid(child, &status, 0), child);
      ASSERT_TRUE(WIFSIGNALED(status)) << "exited " << WEXITSTATUS(status);
      EXPECT_EQ(WTERMSIG(status), signal) << "ended by the same signal";
      EXPECT_TRUE(Entries(dir).empty()) << "signal " << signal << ", overwrite " << overwrite;
    }
  }
}

// A closed file is the user's: the handler removes only files still being written.
TEST(OutputFileTest, TheHandlerLeavesClosedFilesAlone) {
  const std::string dir = NewDir();
  ASSERT_TRUE(WriteOutputFile(dir + "/done", "whole", true).ok());
  auto open = OutputFile::Create(dir + "/partial", false);
  ASSERT_TRUE(open.ok());
  RemovePartialOutputs();
  EXPECT_EQ(Read(dir + "/done"), "whole");
  EXPECT_EQ(Entries(dir), std::vector<std::string>{"done"});
}

// The bound a view of a trace keeps to: writing stops with one error once past it, and nothing is
// left of the output.
TEST(OutputFileTest, AByteLimitStopsTheOutputWithOneError) {
  const std::string dir = NewDir();
  auto file = OutputFile::Create(dir + "/big", false);
  ASSERT_TRUE(file.ok());
  (*file)->SetByteLimit(1000, "the export to big", "a test's bound");
  (*file)->Append(std::string(1000, 'x'));
  (*file)->MaybeFlush();
  EXPECT_TRUE((*file)->status().ok()) << "at the bound, not past it";
  (*file)->Append("y");
  (*file)->MaybeFlush();
  EXPECT_EQ((*file)->status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*file)->status().message(), "the export to big stopped at 1000 bytes, its bound: a test's bound");
  EXPECT_FALSE((*file)->Close().ok());
  EXPECT_TRUE(Entries(dir).empty());
  EXPECT_EQ(TraceOutputBound(1000), 256u * 1000 + 65536);
  EXPECT_EQ(TraceOutputBound(UINT64_MAX / 2), UINT64_MAX) << "no overflow";
}

TEST(OutputFileTest, ModeIsTheUmasksNotTheTemporaryFiles) {
  const std::string dir = NewDir();
  const mode_t old = ::umask(027);
  ASSERT_TRUE(WriteOutputFile(dir + "/new", "x", false).ok());
  Write(dir + "/old", "x");
  ASSERT_TRUE(WriteOutputFile(dir + "/old", "y", true).ok());
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/new").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ASSERT_EQ(::stat((dir + "/old").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(OutputFileTest, ReadForRewriteRefusesLinksAndOtherThanRegularFiles) {
  const std::string dir = NewDir();
  absl::StatusOr<std::string> missing = ReadFileForRewrite(dir + "/none");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, "");
  Write(dir + "/log", "line\n");
  EXPECT_EQ(*ReadFileForRewrite(dir + "/log"), "line\n");
  ASSERT_EQ(::symlink((dir + "/log").c_str(), (dir + "/link").c_str()), 0);
  absl::StatusOr<std::string> link = ReadFileForRewrite(dir + "/link");
  ASSERT_FALSE(link.ok());
  EXPECT_TRUE(absl::StrContains(link.status().message(), "symbolic link")) << link.status();
  EXPECT_FALSE(ReadFileForRewrite(dir).ok());
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  absl::StatusOr<std::string> fifo = ReadFileForRewrite(dir + "/fifo");  // must not block
  ASSERT_FALSE(fifo.ok());
  EXPECT_TRUE(absl::StrContains(fifo.status().message(), "not a regular file")) << fifo.status();
}

}  // namespace
}  // namespace cuscope::core
