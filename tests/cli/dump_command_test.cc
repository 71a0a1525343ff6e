#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lib/cli/commands.h"
#include "lib/cli/trace_dump.h"
#include "lib/core/output_file.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace_writer.h"

namespace cuscope::cli {
namespace {

std::string WriteSmallTrace() {
  const std::string path = ::testing::TempDir() + "/dump_" + std::to_string(::getpid()) + ".cuscope";
  ::unlink(path.c_str());
  auto w = core::TraceWriter::Create(path, false);
  v1::Header h;
  h.mutable_session()->set_start_time_ns(1000);
  h.mutable_session()->set_host("gpu-node");
  EXPECT_TRUE((*w)->WriteHeader(h).ok());
  core::ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string("cudaLaunchKernel_v7000"); });
  core::KernelActivity k;
  k.start = 3000;
  k.end = 4500;
  k.correlation_id = 5;
  k.stream = 7;
  k.config.name = "_Z6vecaddPfS_S_i";
  k.config.grid_x = 1024;
  k.config.block_x = 256;
  b.Add(k);
  const uint32_t frame = b.InternFrame("/opt/app/vecadd", 0x40, "main", 0x10);
  const uint32_t stack = b.InternStack({frame});
  b.AddLaunchStack(5, stack);
  b.AddGraphNode(77, stack, 0, 3500, 1, 9);
  b.AddGraphNode(78, 0, 77);
  v1::Chunk c;
  b.TakeChunk(&c);
  EXPECT_TRUE((*w)->WriteChunk(c).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

// A trace whose last chunk counts CUPTI detached between a duty cycle's windows (or not: all 0).
std::string WriteTraceWithStats(uint64_t detaches, uint64_t given_up, uint64_t attaches) {
  const std::string path = ::testing::TempDir() + "/dump_stats_" + std::to_string(::getpid()) + ".cuscope";
  ::unlink(path.c_str());
  auto w = core::TraceWriter::Create(path, false);
  v1::Header h;
  h.mutable_session()->set_start_time_ns(1000);
  EXPECT_TRUE((*w)->WriteHeader(h).ok());
  v1::Chunk c;
  c.mutable_stats()->set_records_written(3);
  c.mutable_stats()->set_cupti_detaches(detaches);
  c.mutable_stats()->set_cupti_detaches_given_up(given_up);
  c.mutable_stats()->set_cupti_attaches(attaches);
  EXPECT_TRUE((*w)->WriteChunk(c).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

std::string Capture(const Args& args, int* rc) {
  ::testing::internal::CaptureStdout();
  *rc = RunDump(args);
  return ::testing::internal::GetCapturedStdout();
}

TEST(DumpCommandTest, PrintsKernelWithRelativeTimeAndConfiguration) {
  const std::string path = WriteSmallTrace();
  int rc = 0;
  const std::string out = Capture({path}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("gpu-node"), std::string::npos) << out;
  EXPECT_NE(out.find("kernel   +2.000us dur=1500ns"), std::string::npos) << out;
  EXPECT_NE(out.find("grid=(1024,1,1) block=(256,1,1)"), std::string::npos) << out;
  EXPECT_NE(out.find("_Z6vecaddPfS_S_i"), std::string::npos) << out;
  EXPECT_NE(out.find("stack    corr=5 id=1 main (vecadd)"), std::string::npos) << out;
  // The stack's frames were printed with the launch: by id after that.
  EXPECT_NE(out.find("graphnode node=77 created +2.500us thread=1 stack=1 (frames as above)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("graphnode node=78 cloned from node=77"), std::string::npos) << out;
  ::unlink(path.c_str());
}

TEST(DumpCommandTest, SaysHowOftenCuptiWasDetachedOnlyWhenItWas) {
  int rc = 0;
  std::string path = WriteTraceWithStats(12, 2, 11);
  std::string out = Capture({path}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("stats    records=3 "), std::string::npos) << out;
  EXPECT_NE(out.find("attach   cupti_detaches=12 given_up=2 attaches=11 buffers_not_walked=0"), std::string::npos) << out;
  path = WriteTraceWithStats(0, 0, 0);
  out = Capture({path}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("stats    records=3 "), std::string::npos) << out;
  EXPECT_EQ(out.find("cupti_detaches"), std::string::npos) << out;
  ::unlink(path.c_str());
}

// Times are exact to the nanosecond from a real session start (CUPTI's clock is about 1.7e18 ns:
// converted to double first, they came out in steps of 256 ns).
TEST(DumpCommandTest, TimesAreExactToTheNanosecond) {
  EXPECT_EQ(RelativeMicroseconds(1'733'000'000'000'001'234ull, 1'733'000'000'000'000'000ull), "+1.234us");
  EXPECT_EQ(RelativeMicroseconds(1'733'000'000'000'000'001ull, 1'733'000'000'000'000'000ull), "+0.001us");
  EXPECT_EQ(RelativeMicroseconds(1'733'000'000'000'000'000ull, 1'733'000'000'000'000'999ull), "-0.999us");
  EXPECT_EQ(RelativeMicroseconds(5, 5), "+0.000us");
  EXPECT_EQ(RelativeMicroseconds(UINT64_MAX, 0), "+18446744073709551.615us");
}

// The review's trace: 31 KB of records each naming one deep stack and a long name, which dump
// printed in full every time (601 MB). Now a name is cut at 1 KiB, a stack printed once, and the
// text stays within the bound; a trace that still passes it ends with one error line.
std::string WriteAmplifyingTrace(const std::string& name, int launches, int frames) {
  const std::string path = ::testing::TempDir() + "/dump_amplify_" + std::to_string(::getpid()) + ".cuscope";
  ::unlink(path.c_str());
  auto w = core::TraceWriter::Create(path, false);
  v1::Header h;
  h.mutable_session()->set_start_time_ns(1000);
  EXPECT_TRUE((*w)->WriteHeader(h).ok());
  core::ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string("cudaLaunchKernel_v7000"); });
  std::vector<uint32_t> ids;
  for (int f = 0; f < frames; ++f) ids.push_back(b.InternFrame("/opt/app/" + std::string(200, 'm'), 0x40 + f, "f", 0));
  const uint32_t stack = frames > 0 ? b.InternStack(ids) : 0;
  for (int i = 0; i < launches; ++i) {
    core::KernelActivity k;
    k.start = 3000 + i;
    k.end = 3001 + i;
    k.correlation_id = 5 + i;
    k.config.name = name;
    b.Add(k);
    if (stack != 0) b.AddLaunchStack(5 + i, stack);
  }
  v1::Chunk c;
  b.TakeChunk(&c);
  EXPECT_TRUE((*w)->WriteChunk(c).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

TEST(DumpCommandTest, LongNamesAreCutAndAStackIsPrintedOnce) {
  const std::string path = WriteAmplifyingTrace("_Z" + std::string(100'000, 'k'), 50, 64);
  int rc = 0;
  const std::string out = Capture({path}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("... (100002 bytes)"), std::string::npos);
  size_t full = 0, by_id = 0;
  for (size_t at = 0; (at = out.find("stack    corr=", at)) != std::string::npos; ++at) {
    const size_t end = out.find('\n', at);
    (out.compare(end - 17, 17, "(frames as above)") == 0 ? by_id : full)++;
  }
  EXPECT_EQ(full, 1u);
  EXPECT_EQ(by_id, 49u);
  EXPECT_LT(out.size(), 50u * 1500 + 64 * 300 + 4096) << "about 1 KiB a kernel and the stack once";
  ::unlink(path.c_str());
}

TEST(DumpCommandTest, TextPastTheBoundEndsWithOneErrorLine) {
  // 20,000 launches of a name of 1,000 control characters: each kernel record takes a few bytes, its
  // line 4 KB (each character printed as \x01).
  const std::string path = WriteAmplifyingTrace(std::string(1000, '\x01'), 20'000, 0);
  int rc = 0;
  ::testing::internal::CaptureStderr();
  const std::string out = Capture({path}, &rc);
  const std::string err = ::testing::internal::GetCapturedStderr();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(rc, 1);
  EXPECT_LE(out.size(), core::TraceOutputBound(static_cast<uint64_t>(st.st_size)));
  EXPECT_GT(out.size(), core::TraceOutputBound(static_cast<uint64_t>(st.st_size)) - 5000) << "stopped at the bound";
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("cuscope: dump stopped after"), std::string::npos) << err;
  EXPECT_NE(err.find("256 times the trace's"), std::string::npos) << err;
  ::unlink(path.c_str());
}

TEST(DumpCommandTest, NotATraceExitsWithTwo) {
  const std::string path = ::testing::TempDir() + "/notatrace_" + std::to_string(::getpid());
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("hello", f);
  std::fclose(f);
  int rc = 0;
  Capture({path}, &rc);
  EXPECT_EQ(rc, 2);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace cuscope::cli
