// Native frames' source lines from this test's own DWARF (it is built with -g): a frame taken here
// as the collector takes it (a return address resolved to module, offset and build id) gets this
// file and the line of the call; a file of another build, a missing file, a skipped module, a frame
// without build id and a Python frame keep what they had; without libdw nothing is resolved and
// one line says why. Then `cuscope stats` and `cuscope export` on a trace with such a frame show it.
#include "lib/symbolize/native_source_lines.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/analysis/launch_sites.h"
#include "lib/cli/commands.h"
#include "lib/core/call_stack.h"
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
  const core::ResolvedFrame r = core::ResolveReturnAddress(EnqueueInference());
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
  EXPECT_EQ(summary.modules_missing, (std::vector<std::string>{fifo, "/dev/zero"}));
  ::unlink(fifo.c_str());
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
