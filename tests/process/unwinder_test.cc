// The two unwinders CaptureCallStack can use: libunwind walks the same frames as libgcc (through
// this program and through libc's qsort calling back), keeps the bounds and the skip, a missing
// libunwind leaves libgcc's, and an unloaded object sends every stack back to libgcc's for good.
// Its own executable: the last case changes the process for the rest of its life.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/process/call_stack.h"

namespace cuscope::process {
namespace {

// Recurses `depth` frames, then takes the stack with each unwinder in turn from one call site (a
// compiler that unrolls the loop makes two, which frame 0, the call's return address, shows).
__attribute__((noinline)) void TakeBoth(int depth, std::vector<uintptr_t>* with_libgcc,
                                        std::vector<uintptr_t>* with_libunwind) {
  if (depth > 0) {
    TakeBoth(depth - 1, with_libgcc, with_libunwind);
    asm volatile("" ::: "memory");  // a real call chain, not a tail call
    return;
  }
  for (int i = 0; i < 2; ++i) {
    if (i == 0) {
      UseLibgcc();
      ASSERT_EQ(ActiveUnwinder(), Unwinder::kLibgcc);
    } else {
      ASSERT_TRUE(UseLibunwind().ok());
      ASSERT_EQ(ActiveUnwinder(), Unwinder::kLibunwind);
    }
    uintptr_t pcs[kMaxCallStackFrames];
    const size_t n = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
    (i == 0 ? with_libgcc : with_libunwind)->assign(pcs, pcs + n);
  }
}

// First: libunwind is not loaded yet (once loaded, it stays for the process's life).
TEST(UnwinderTest, AMissingLibraryLeavesLibgcc) {
  UseLibgcc();
  const absl::Status st = UseLibunwindFrom("libunwind-not-here.so.99");
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "libunwind-not-here.so.99")) << st;
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibgcc);
  const absl::Status no_symbol = UseLibunwindFrom("libc.so.6");
  EXPECT_TRUE(absl::IsNotFound(no_symbol)) << no_symbol;
  EXPECT_TRUE(absl::StrContains(no_symbol.message(), "unw_backtrace")) << no_symbol;
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibgcc);
  uintptr_t pcs[kMaxCallStackFrames];
  EXPECT_GE(CaptureCallStack(pcs, kMaxCallStackFrames, 0), 2u);
}

TEST(UnwinderTest, LibunwindLoadsAndIsUsed) {
  UseLibgcc();
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibgcc);
  const absl::Status st = UseLibunwind();
  ASSERT_TRUE(st.ok()) << st << " (scripts/install_deps.sh installs libunwind8)";
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibunwind);
  EXPECT_TRUE(UseLibunwind().ok()) << "a second call keeps it";
  UseLibgcc();
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibgcc);
}

TEST(UnwinderTest, BothWalkTheSameFrames) {
  for (int depth : {0, 5, 30}) {
    std::vector<uintptr_t> gcc, unw;
    TakeBoth(depth, &gcc, &unw);
    ASSERT_GE(gcc.size(), static_cast<size_t>(depth) + 3) << depth;
    // libgcc reports one frame outside main's caller that libunwind stops before, at most.
    EXPECT_LE(gcc.size() - std::min(gcc.size(), unw.size()), 1u) << depth;
    EXPECT_LE(unw.size(), gcc.size()) << depth;
    for (size_t i = 1; i < std::min(gcc.size(), unw.size()); ++i) {
      EXPECT_EQ(gcc[i], unw[i]) << "frame " << i << " at depth " << depth;
    }
    EXPECT_EQ(ResolveReturnAddress(gcc[0]).module, ResolveReturnAddress(unw[0]).module) << "TakeBoth's call";
  }
  UseLibgcc();
}

TEST(UnwinderTest, LibunwindKeepsTheBoundAndTheSkip) {
  ASSERT_TRUE(UseLibunwind().ok());
  uintptr_t pcs[kMaxCallStackFrames];
  const size_t all = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
  ASSERT_GE(all, 3u);
  uintptr_t two[2];
  EXPECT_EQ(CaptureCallStack(two, 2, 0), 2u);
  EXPECT_EQ(two[1], pcs[1]);
  uintptr_t skipped[kMaxCallStackFrames];
  EXPECT_EQ(CaptureCallStack(skipped, kMaxCallStackFrames, 1), all - 1);
  EXPECT_EQ(skipped[0], pcs[1]) << "the caller's frame went first";
  EXPECT_EQ(CaptureCallStack(nullptr, 4, 0), 0u);
  EXPECT_EQ(CaptureCallStack(two, 0, 0), 0u);
  uintptr_t one[1];
  EXPECT_EQ(CaptureCallStack(one, 1, 1000), 0u) << "a skip past every frame leaves none";
  UseLibgcc();
}

std::vector<uintptr_t> g_taken;

int CompareAndTakeStack(const void* a, const void* b) {
  if (g_taken.empty()) {
    uintptr_t pcs[kMaxCallStackFrames];
    g_taken.assign(pcs, pcs + CaptureCallStack(pcs, kMaxCallStackFrames, 0));
  }
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

TEST(UnwinderTest, LibunwindWalksThroughLibcCallingBack) {
  ASSERT_TRUE(UseLibunwind().ok());
  int values[] = {3, 1, 2};
  g_taken.clear();
  std::qsort(values, 3, sizeof(int), CompareAndTakeStack);
  bool in_libc = false, past_libc = false;
  for (uintptr_t pc : g_taken) {
    const bool libc = absl::StrContains(ResolveReturnAddress(pc).module, "libc.so");
    past_libc |= in_libc && !libc;
    in_libc |= libc;
  }
  EXPECT_TRUE(in_libc) << "qsort's frame";
  EXPECT_TRUE(past_libc) << "and this test's frames beyond it";
  UseLibgcc();
}

TEST(UnwinderTest, EachThreadWalksItsOwnStack) {
  ASSERT_TRUE(UseLibunwind().ok());
  std::vector<std::thread> threads;
  std::vector<size_t> frames(8);
  for (size_t t = 0; t < frames.size(); ++t) {
    threads.emplace_back([&frames, t] {
      uintptr_t pcs[kMaxCallStackFrames];
      for (int i = 0; i < 1000; ++i) frames[t] = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
    });
  }
  for (auto& th : threads) th.join();
  for (size_t n : frames) {
    EXPECT_GE(n, 2u);
    EXPECT_EQ(n, frames[0]) << "the same code walked from each thread";
  }
  UseLibgcc();
}

// Last: from here on this process keeps libgcc's unwinder. An object unloaded while libunwind is
// in use sends the next stack to libgcc's; a session that asks for libunwind again later, after
// one that used libgcc's, is refused too (libunwind's caches outlived the unload either way).
TEST(UnwinderTest, ZzAnUnloadedObjectSendsStacksBackToLibgcc) {
  ASSERT_TRUE(UseLibunwind().ok());
  uintptr_t pcs[kMaxCallStackFrames];
  const size_t before = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
  void* module = ::dlopen(CUSCOPE_UNWINDER_PROBE_MODULE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(module, nullptr) << ::dlerror();
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibunwind) << "a module loaded changes nothing";
  ASSERT_EQ(::dlclose(module), 0);
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibgcc);
  const size_t after = CaptureCallStack(pcs, kMaxCallStackFrames, 0);
  EXPECT_GE(after, before) << "the same stack, walked by libgcc";
  EXPECT_LE(after, before + 1) << "libgcc may report one frame outside main's caller";
  UseLibgcc();  // a session that ended
  const absl::Status again = UseLibunwind();  // and the next one
  EXPECT_TRUE(absl::IsFailedPrecondition(again)) << again;
  EXPECT_TRUE(absl::StrContains(again.message(), "unloaded")) << again;
  EXPECT_EQ(ActiveUnwinder(), Unwinder::kLibgcc);
  EXPECT_GE(CaptureCallStack(pcs, kMaxCallStackFrames, 0), before);
}

}  // namespace
}  // namespace cuscope::process
