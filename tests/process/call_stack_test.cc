// Call stacks taken with the C runtime's unwinder and resolved through the dynamic linker.
#include "lib/process/call_stack.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cuscope::process {
namespace {

std::vector<uintptr_t> g_taken;

// Compared by qsort: the stack is taken inside libc's qsort, called from this test.
int CompareAndTakeStack(const void* a, const void* b) {
  if (g_taken.empty()) {
    uintptr_t pcs[kMaxCallStackFrames];
    const size_t n = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
    g_taken.assign(pcs, pcs + n);
  }
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

TEST(CallStackTest, TheStackRunsThroughTheLibraryThatCalledBack) {
  int values[] = {3, 1, 2};
  g_taken.clear();
  std::qsort(values, 3, sizeof(int), CompareAndTakeStack);
  ASSERT_GE(g_taken.size(), 3u);
  bool in_libc = false, in_this_program = false;
  for (uintptr_t pc : g_taken) {
    const ResolvedFrame f = ResolveReturnAddress(pc);
    in_libc |= absl::StrContains(f.module, "libc.so");
    in_this_program |= absl::StrContains(f.module, "process_test") || f.module.empty();
  }
  EXPECT_TRUE(in_libc) << "qsort's frame";
  EXPECT_TRUE(in_this_program);
}

TEST(CallStackTest, BoundedAndSkipping) {
  uintptr_t pcs[kMaxCallStackFrames];
  const size_t all = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
  ASSERT_GE(all, 2u);
  uintptr_t two[2];
  EXPECT_EQ(CaptureCallStack(two, 2, 0), 2u);
  uintptr_t skipped[kMaxCallStackFrames];
  const size_t fewer = CaptureCallStack(skipped, kMaxCallStackFrames, 1);
  EXPECT_EQ(fewer, all - 1);
  EXPECT_EQ(skipped[0], pcs[1]) << "the caller's frame went first";
  EXPECT_EQ(CaptureCallStack(nullptr, 4, 0), 0u);
  EXPECT_EQ(CaptureCallStack(two, 0, 0), 0u);
}

TEST(CallStackTest, AnExportedFunctionResolvesToItsNameAndModule) {
  // A return address just past the function's first byte: its call instruction lies at its start.
  const ResolvedFrame f = ResolveReturnAddress(reinterpret_cast<uintptr_t>(&::getpid) + 1);
  EXPECT_TRUE(absl::StrContains(f.module, "libc.so")) << f.module;
  EXPECT_TRUE(absl::StrContains(f.function, "getpid")) << f.function;
  EXPECT_EQ(f.function_offset, 0u);
  const ResolvedFrame none = ResolveReturnAddress(0);
  EXPECT_TRUE(none.module.empty());
  EXPECT_TRUE(none.function.empty());
}

// The executable's own frames name its file, whatever its argv[0] was (a virtual environment's
// `python`, a relative path, a process title).
TEST(CallStackTest, TheExecutablesFramesNameItsFile) {
  uintptr_t pcs[kMaxCallStackFrames];
  const size_t n = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
  ASSERT_GT(n, 0u);
  // A process title changer writes over argv[0] in place, as here (and back after).
  const std::string argv0 = program_invocation_name;
  std::fill(program_invocation_name, program_invocation_name + argv0.size(), 'x');
  const ResolvedFrame f = ResolveReturnAddress(pcs[0]);  // this test's own code
  std::copy(argv0.begin(), argv0.end(), program_invocation_name);
  char exe[4096];
  const ssize_t len = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(len, 0);
  EXPECT_EQ(f.module, std::string(exe, static_cast<size_t>(len)));
  EXPECT_EQ(f.module.front(), '/') << "a path, not argv[0]";
}

}  // namespace
}  // namespace cuscope::process
