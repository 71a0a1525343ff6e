// The launch site of a kernel launched with <<<...>>> from real nvcc output (launch_glue_probe.cu,
// line tables, a fake runtime that takes the stack inside the launch as the collector would): the
// stub and the launch helper nvcc writes are passed over, and the site is the function and line
// that wrote the launch, once the module's lines are read.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/analysis/launch_sites.h"
#include "lib/process/call_stack.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/dictionary.h"
#include "lib/symbolize/native_source_lines.h"

extern std::vector<uintptr_t> g_launch_stack;
extern "C" int g_probe_launch_line;
extern "C" void LaunchProbe(int* out);

namespace cuscope {
namespace {

TEST(LaunchGlueTest, TheSiteIsTheLineThatWroteTheLaunch) {
  LaunchProbe(nullptr);
  ASSERT_GE(g_launch_stack.size(), 3u) << "the fake launch, the stub, LaunchProbe";
  core::ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string(); });
  core::KernelActivity kernel;
  kernel.config.name = "_Z12probe_kernelPii";  // as CUDA names it
  kernel.correlation_id = 1;
  b.Add(kernel);
  // The innermost frame is the runtime's (here, the fake standing in for libcudart).
  std::vector<uint32_t> frames = {b.InternFrame("/usr/local/cuda/lib64/libcudart.so.13", 0x229a0, "__cudaLaunchKernel", 0, "")};
  for (size_t i = 1; i < g_launch_stack.size(); ++i) {
    const process::ResolvedFrame r = process::ResolveReturnAddress(g_launch_stack[i]);
    frames.push_back(b.InternFrame(r.module, r.module_offset, r.function, r.function_offset, r.build_id));
  }
  const uint32_t stack = b.InternStack(frames);
  v1::Chunk chunk;
  b.TakeChunk(&chunk);
  core::Dictionary dict;
  ASSERT_TRUE(dict.Absorb(chunk).ok());
  const analysis::KernelNameSet kernels = analysis::KernelNames(dict);
  ASSERT_TRUE(kernels.contains("_Z12probe_kernelPii"));

  const symbolize::SourceLineSummary summary =
      symbolize::AddNativeSourceLines(dict, [](std::string_view module) { return analysis::IsCudaLibrary(module); });
  ASSERT_FALSE(summary.libdw_missing) << "libdw.so.1 is installed with libdw-dev";
  std::string frames_read;  // for a failure's message
  for (uint32_t frame : dict.stack(stack).frames()) frames_read += "\n  " + analysis::FrameText(dict, frame);
  EXPECT_GE(summary.frames_resolved, 2u) << frames_read;
  // The stub nvcc writes for the kernel, its line in the generated stub file or the toolkit's header.
  EXPECT_TRUE(analysis::IsLaunchGlue(dict, dict.stack(stack).frames(1), kernels))
      << analysis::FrameText(dict, dict.stack(stack).frames(1));
  const uint32_t site = analysis::LaunchSiteFrame(dict, stack, kernels);
  // The function that wrote the launch, at the launch's line (the line table alone names the
  // kernel's definition there: the wrapper nvcc inlined into it).
  EXPECT_EQ(analysis::FrameText(dict, site),
            "LaunchProbe (launch_glue_probe.cu:" + std::to_string(g_probe_launch_line) + ")")
      << frames_read;
}

}  // namespace
}  // namespace cuscope
