// Native frames' source lines from this test's own DWARF (it is built with -g): a frame taken here
// as the collector takes it (a return address resolved to module, offset and build id) gets this
// file and the line of the call; a file of another build, a missing file, a skipped module, a frame
// without build id and a Python frame keep what they had; without libdw nothing is resolved and
// one line says why. Then `cuscope stats` and `cuscope export` on a trace with such a frame show it.
#include "lib/symbolize/native_source_lines.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/analysis/launch_sites.h"
#include "lib/cli/commands.h"
#include "lib/process/call_stack.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace_writer.h"
#include "lib/symbolize/libdw.h"

namespace cuscope::symbolize {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

// A launch call made from a known line: its return address, as the unwinder would give it.
__attribute__((noinline)) uintptr_t ReturnAddressOfMyCall() {
  return reinterpret_cast<uintptr_t>(__builtin_return_address(0));
}
uint32_t g_call_line = 0;
__attribute__((noinline)) uintptr_t EnqueueInference() {
  const uintptr_t ra = ReturnAddressOfMyCall(); g_call_line = __LINE__;
  asm volatile("" ::: "memory");  // the call is not the function's last instruction
  return ra;
}

// A dictionary with one frame per entry, as the trace reader would hold them.
struct FrameSpec {
  std::string module;
  uint64_t offset = 0;
  std::string function;
  std::string build_id;
  bool python = false;
};
core::Dictionary DictionaryOf(const std::vector<FrameSpec>& specs) {
  core::ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string(); });
  std::vector<uint32_t> ids;
  for (const FrameSpec& s : specs) {
    ids.push_back(s.python ? b.InternPythonFrame(s.module, s.function, 12)
                           : b.InternFrame(s.module, s.offset, s.function, 0, s.build_id));
  }
  b.InternStack(ids);
  v1::Chunk chunk;
  b.TakeChunk(&chunk);
  core::Dictionary dict;
  EXPECT_TRUE(dict.Absorb(chunk).ok());
  return dict;
}

FrameSpec ThisCallSite() {
  const process::ResolvedFrame r = process::ResolveReturnAddress(EnqueueInference());
  return {r.module, r.module_offset, r.function, r.build_id};
}

bool SkipNone(std::string_view) { return false; }

TEST(NativeSourceLinesTest, AFrameOfThisBuildGetsItsFileAndLine) {
  const FrameSpec site = ThisCallSite();
  ASSERT_FALSE(site.build_id.empty());
  core::Dictionary dict = DictionaryOf({site});
  const SourceLineSummary summary = AddNativeSourceLines(dict, SkipNone);
  ASSERT_FALSE(summary.libdw_missing) << "libdw.so.1 is installed with libdw-dev";
  EXPECT_EQ(summary.frames_with_build_id, 1u);
  EXPECT_EQ(summary.frames_resolved, 1u);
  EXPECT_EQ(summary.modules_read, 1u);
  const v1::StackFrame& f = dict.frame(1);
  EXPECT_THAT(dict.str(f.source_file()), EndsWith("native_source_lines_test.cc"));
  EXPECT_EQ(f.line(), g_call_line);
  EXPECT_EQ(dict.str(f.module()), site.module) << "the module stays the executable";
  EXPECT_FALSE(analysis::IsPythonFrame(dict, 1));
  // The executable exports no symbols: the function comes from its symbol table.
  EXPECT_THAT(analysis::FrameText(dict, 1),
              HasSubstr("EnqueueInference (native_source_lines_test.cc:" + std::to_string(g_call_line) + ")"));
  EXPECT_TRUE(SourceLineNotes(summary).empty());
}

// clang writes no .debug_aranges by default, and libdwfl then finds no compile unit, hence no
// line, for any address: the lines come from the units' own ranges. This build without its
// .debug_aranges (objcopy) still gets its file and line; an address no unit holds gets none.
TEST(NativeSourceLinesTest, AModuleWithoutAddressRangesStillGetsItsLines) {
  const FrameSpec site = ThisCallSite();
  const std::string copy = ::testing::TempDir() + "/without_aranges";
  const std::string command =
      "objcopy --remove-section=.debug_aranges '" + site.module + "' '" + copy + "' 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::string sections = "readelf -S '" + copy + "' | grep -q debug_aranges";
  ASSERT_NE(std::system(sections.c_str()), 0) << "the copy has no .debug_aranges";
  FrameSpec stripped = site;
  stripped.module = copy;
  FrameSpec nowhere = stripped;
  nowhere.offset = 0;  // the ELF header: no unit's code
  core::Dictionary dict = DictionaryOf({stripped, nowhere});
  const SourceLineSummary summary = AddNativeSourceLines(dict, SkipNone);
  EXPECT_EQ(summary.modules_read, 1u);
  EXPECT_EQ(summary.frames_resolved, 1u);
  const v1::StackFrame& f = dict.frame(1);
  EXPECT_THAT(dict.str(f.source_file()), EndsWith("native_source_lines_test.cc"));
  EXPECT_EQ(f.line(), g_call_line);
  EXPECT_EQ(dict.frame(2).line(), 0u) << "an address outside every unit gets no line";
  std::remove(copy.c_str());
}

TEST(NativeSourceLinesTest, AnotherBuildAMissingFileAndSkippedModulesKeepTheirOffsets) {
  FrameSpec rebuilt = ThisCallSite();
  rebuilt.build_id[0] = static_cast<char>(rebuilt.build_id[0] ^ 0x5a);
  FrameSpec missing = ThisCallSite();
  missing.module = "/nonexistent/inference_server";
  FrameSpec skipped = ThisCallSite();
  skipped.offset += 4;  // another frame of the same module, which the filter names
  core::Dictionary dict = DictionaryOf({rebuilt, missing, skipped});
  const SourceLineSummary summary =
      AddNativeSourceLines(dict, [&](std::string_view module) { return module == skipped.module; });
  EXPECT_EQ(summary.frames_with_build_id, 1u) << "the skipped module's frames are not counted";
  EXPECT_EQ(summary.frames_resolved, 0u);
  // The rebuilt frame's module is the one skipped too: only the missing module was looked at.
  EXPECT_EQ(summary.modules_missing, std::vector<std::string>{"/nonexistent/inference_server"});
  for (uint32_t id = 1; id <= 3; ++id) EXPECT_EQ(dict.frame(id).source_file(), 0u);

  core::Dictionary other = DictionaryOf({rebuilt});
  const SourceLineSummary another = AddNativeSourceLines(other, SkipNone);
  EXPECT_EQ(another.frames_resolved, 0u);
  EXPECT_EQ(another.modules_rebuilt, std::vector<std::string>{rebuilt.module});
  EXPECT_EQ(other.frame(1).line(), 0u);
  const std::vector<std::string> notes = SourceLineNotes(another);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("another build than the one that ran"));
  EXPECT_THAT(notes[0], HasSubstr(rebuilt.module));
}

// A trace is input like any other: a module path naming a FIFO or a device is not opened (reading
// either would never end); it counts as not on this machine.
TEST(NativeSourceLinesTest, AModuleThatIsNoRegularFileIsNotOpened) {
  const std::string fifo = ::testing::TempDir() + "/module_fifo_" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  FrameSpec from_fifo = ThisCallSite();
  from_fifo.module = fifo;
  FrameSpec from_device = ThisCallSite();
  from_device.module = "/dev/zero";
  core::Dictionary dict = DictionaryOf({from_fifo, from_device});
  const SourceLineSummary summary = AddNativeSourceLines(dict, SkipNone);
  EXPECT_EQ(summary.frames_resolved, 0u);
  EXPECT_EQ(summary.modules_refused,
            (std::vector<std::string>{fifo + ": not a regular file", "/dev/zero: not a regular file"}));
  const std::vector<std::string> notes = SourceLineNotes(summary);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("2 file(s) the launch stacks name were not read: " + fifo + ": not a regular file"));
  ::unlink(fifo.c_str());
}

// Runs `work` in a child process and says whether it ended within `seconds` (a hang fails the test
// instead of blocking the suite).
bool EndsWithin(int seconds, const std::function<bool()>& work) {
  const pid_t child = ::fork();
  if (child == 0) _exit(work() ? 0 : 1);
  for (int waited_ms = 0; waited_ms < seconds * 1000; waited_ms += 20) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    ::usleep(20'000);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return false;
}

// The review's first trace: a module without DWARF whose .gnu_debuglink names a FIFO beside it.
// libdw's standard search opened that FIFO and blocked analyze, export, report and stats for good;
// separate debug files are now looked up by build id under the debug directories only.
TEST(NativeSourceLinesTest, ADebugLinkNamingAFifoIsNeverOpened) {
  const std::string dir = ::testing::TempDir() + "/debuglink_fifo_" + std::to_string(::getpid());
  ASSERT_EQ(::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  const FrameSpec site = ThisCallSite();
  const std::string stripped = dir + "/inference_server";
  const std::string debug = dir + "/inference_server.debug";
  ASSERT_EQ(::system(("cp " + site.module + " " + debug).c_str()), 0);  // objcopy reads it for the CRC
  ASSERT_EQ(::system(("objcopy --strip-debug --add-gnu-debuglink=" + debug + " " + site.module + " " + stripped).c_str()),
            0);
  ASSERT_EQ(::unlink(debug.c_str()), 0);
  ASSERT_EQ(::mkfifo(debug.c_str(), 0600), 0);
  FrameSpec from_stripped = site;
  from_stripped.module = stripped;  // the same build id: objcopy keeps the note
  EXPECT_TRUE(EndsWithin(30, [&] {
    core::Dictionary dict = DictionaryOf({from_stripped});
    const SourceLineSummary summary = AddNativeSourceLines(dict, SkipNone);
    return summary.modules_read == 1 && summary.frames_resolved == 0;  // read, but no DWARF found for it
  })) << "reading the module's lines blocked or failed";
  ASSERT_EQ(::system(("rm -rf " + dir).c_str()), 0);
}

// The review's second trace: a module path naming a sparse file with an ELF header that claims 20
// million sections (libelf took 4 GB for it in 5 s). Refused from its header.
TEST(NativeSourceLinesTest, AnElfClaimingMillionsOfSectionsIsRefusedFromItsHeader) {
  const std::string path = ::testing::TempDir() + "/twenty_million_sections_" + std::to_string(::getpid());
  ::unlink(path.c_str());
  const uint64_t sections = 20'000'000;
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = EM_X86_64;
  h.e_version = EV_CURRENT;
  h.e_shentsize = sizeof(Elf64_Shdr);
  h.e_shoff = 4096;
  Elf64_Shdr first{};
  first.sh_size = sections;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, &h, sizeof(h)), static_cast<ssize_t>(sizeof(h)));
  ASSERT_EQ(::pwrite(fd, &first, sizeof(first), 4096), static_cast<ssize_t>(sizeof(first)));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(4096 + sections * sizeof(Elf64_Shdr))), 0);
  ::close(fd);
  FrameSpec huge = ThisCallSite();
  huge.module = path;
  core::Dictionary dict = DictionaryOf({huge});
  const SourceLineSummary summary = AddNativeSourceLines(dict, SkipNone);
  EXPECT_EQ(summary.frames_resolved, 0u);
  ASSERT_EQ(summary.modules_refused.size(), 1u);
  EXPECT_THAT(summary.modules_refused[0], HasSubstr("extended section numbering"));
  ::unlink(path.c_str());
}

TEST(NativeSourceLinesTest, FramesWithoutBuildIdAndPythonFramesAreLeftAlone) {
  FrameSpec old_trace = ThisCallSite();
  old_trace.build_id.clear();
  FrameSpec python{"/srv/app/serve.py", 0, "Server.handle", "", true};
  core::Dictionary dict = DictionaryOf({old_trace, python});
  const SourceLineSummary summary = AddNativeSourceLines(dict, SkipNone);
  EXPECT_EQ(summary.frames_with_build_id, 0u);
  EXPECT_FALSE(summary.libdw_missing) << "nothing to resolve: libdw is not even looked for";
  EXPECT_EQ(dict.frame(1).source_file(), 0u);
  EXPECT_TRUE(analysis::IsPythonFrame(dict, 2));
  EXPECT_EQ(analysis::FrameText(dict, 2), "Server.handle (serve.py:12)");
  EXPECT_TRUE(SourceLineNotes(summary).empty());
}

TEST(NativeSourceLinesTest, WithoutLibdwNothingIsResolvedAndOneLineSaysWhy) {
  core::Dictionary dict = DictionaryOf({ThisCallSite()});
  const SourceLineSummary summary = AddNativeSourceLines(dict, SkipNone, Libdw{});
  EXPECT_TRUE(summary.libdw_missing);
  EXPECT_EQ(summary.frames_resolved, 0u);
  EXPECT_EQ(dict.frame(1).source_file(), 0u);
  const std::vector<std::string> notes = SourceLineNotes(summary);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("libdw.so.1"));
}

TEST(NativeSourceLinesTest, NotesNameThreeModulesAndCountTheRest) {
  SourceLineSummary s;
  s.modules_missing = {"/a/one", "/a/two", "/a/three", "/a/four", "/a/five"};
  const std::vector<std::string> notes = SourceLineNotes(s);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("5 module(s) of the launch stacks are not on this machine"));
  EXPECT_THAT(notes[0], HasSubstr("/a/one, /a/two, /a/three and 2 more"));
}

// A trace with one kernel launched from here (through the runtime's frame), as a file.
std::string WriteTraceLaunchedFromHere(const std::string& name) {
  const FrameSpec site = ThisCallSite();
  const std::string path = ::testing::TempDir() + "/" + name + "_" + std::to_string(::getpid()) + ".cuscope";
  ::unlink(path.c_str());
  auto w = core::TraceWriter::Create(path, false);
  EXPECT_TRUE(w.ok());
  v1::Header h;
  h.mutable_session()->set_start_time_ns(1000);
  EXPECT_TRUE((*w)->WriteHeader(h).ok());
  core::ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string("cudaLaunchKernel_v7000"); });
  core::KernelActivity k;
  k.start = 3000;
  k.end = 9000;
  k.correlation_id = 5;
  k.stream = 7;
  k.config.name = "_Z6decodePf";
  b.Add(k);
  const uint32_t runtime = b.InternFrame("/usr/local/cuda/lib64/libcudart.so.13", 0x4a10, "cudaLaunchKernel", 16, "xx");
  const uint32_t app = b.InternFrame(site.module, site.offset, site.function, 0, site.build_id);
  b.AddLaunchStack(5, b.InternStack({runtime, app}));
  v1::Chunk c;
  b.TakeChunk(&c);
  EXPECT_TRUE((*w)->WriteChunk(c).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

// The user's path: `cuscope stats --report cuda_kern_stack_sum` shows the launch site with its line.
TEST(NativeSourceLinesTest, StatsShowsTheLaunchSiteLine) {
  const std::string path = WriteTraceLaunchedFromHere("native_lines_stats");
  ::testing::internal::CaptureStdout();
  const int rc = cli::RunStats({"--report", "cuda_kern_stack_sum", path});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("EnqueueInference (native_source_lines_test.cc:" + std::to_string(g_call_line) + ")"))
      << out;
  ::unlink(path.c_str());
}

// And a Chrome JSON export gives the kernel slice that launch site.
TEST(NativeSourceLinesTest, ExportNamesTheLaunchSiteLine) {
  const std::string path = WriteTraceLaunchedFromHere("native_lines_export");
  const std::string json = path + ".json";
  ::unlink(json.c_str());
  ::testing::internal::CaptureStdout();
  const int rc = cli::RunExport({"--format", "chrome-json", path, "-o", json});
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  FILE* f = std::fopen(json.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), f)) > 0;) text.append(buffer, n);
  std::fclose(f);
  EXPECT_THAT(text, HasSubstr("EnqueueInference (native_source_lines_test.cc:" + std::to_string(g_call_line) + ")"));
  ::unlink(path.c_str());
  ::unlink(json.c_str());
}

}  // namespace
}  // namespace cuscope::symbolize
