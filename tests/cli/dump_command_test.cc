#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "lib/cli/commands.h"
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
  EXPECT_NE(out.find("graphnode node=77 created +2.500us thread=1 stack=1 main (vecadd)"), std::string::npos) << out;
  EXPECT_NE(out.find("graphnode node=78 cloned from node=77"), std::string::npos) << out;
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
