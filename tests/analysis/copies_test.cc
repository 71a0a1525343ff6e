// The copies.serialized, copies.pageable_async, copies.sync and memset.sync rules: a positive case,
// a negative control, and both sides of each threshold, on synthetic timelines.
#include "lib/analysis/rules/rules.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/analysis/rule_test_support.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::RunRule;
using cuscope::testing::With;

TEST(CopiesRule, CopiesSerializedWithKernelsAreReported) {
  SyntheticTrace s;
  for (int i = 0; i < 10; ++i) {
    s.Memcpy(v1::COPY_KIND_HTOD, i * 200.0, 100, 1 << 20, true);
    s.Kernel("compute", i * 200.0 + 100, 100);
  }
  const auto f = RunRule(s, CopiesRule, "copies.serialized");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("h2d_overlap_share"), 0);
  EXPECT_EQ(f[0].recoverable_ns, 1000'000u);
}

// Copies on their own stream, overlapping kernels by `overlap_us` of each 100 us copy.
void OverlappedCopies(SyntheticTrace& s, double overlap_us) {
  for (int i = 0; i < 10; ++i) {
    s.Kernel("compute", i * 200.0, 100, 13);
    s.Memcpy(v1::COPY_KIND_HTOD, i * 200.0 + 100 - overlap_us, 100, 1 << 20, true, v1::MEMORY_KIND_PINNED, 14);
  }
}

TEST(CopiesRule, OverlappedCopiesRaiseNothing) {
  SyntheticTrace s;
  OverlappedCopies(s, 100);
  EXPECT_TRUE(RunRule(s, CopiesRule, "copies.serialized").empty());
}

TEST(CopiesRule, OverlapThresholdBothSides) {
  SyntheticTrace half;
  OverlappedCopies(half, 50);  // 50% overlapped: fine by default
  EXPECT_TRUE(RunRule(half, CopiesRule, "copies.serialized").empty());
  SyntheticTrace strict;
  OverlappedCopies(strict, 50);
  EXPECT_EQ(RunRule(strict, CopiesRule, "copies.serialized", With({"copy_overlap_min_share=0.6"})).size(), 1u);
}

TEST(CopiesRule, AsyncCopiesFromPageableMemory) {
  SyntheticTrace pageable;
  pageable.Kernel("k", 0, 10);
  pageable.Memcpy(v1::COPY_KIND_HTOD, 20, 30, 1 << 20, true, v1::MEMORY_KIND_PAGEABLE);
  const auto f = RunRule(pageable, CopiesRule, "copies.pageable_async");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_GE(f[0].severity, Severity::kWarning);
  EXPECT_EQ(*f[0].number("copies"), 1);

  SyntheticTrace pinned;
  pinned.Kernel("k", 0, 10);
  pinned.Memcpy(v1::COPY_KIND_HTOD, 20, 30, 1 << 20, true, v1::MEMORY_KIND_PINNED);
  EXPECT_TRUE(RunRule(pinned, CopiesRule, "copies.pageable_async").empty());

  SyntheticTrace below_count;
  below_count.Memcpy(v1::COPY_KIND_HTOD, 20, 30, 1 << 20, true, v1::MEMORY_KIND_PAGEABLE);
  EXPECT_TRUE(RunRule(below_count, CopiesRule, "copies.pageable_async", With({"pageable_async_min_count=2"})).empty());
}

TEST(CopiesRule, SynchronousCopiesSpareSmallHostToDevice) {
  auto one_copy = [](SyntheticTrace& s, v1::CopyKind kind, uint64_t bytes) {
    const uint64_t corr = s.Api("cudaMemcpy_v3020", 0, 40);
    s.Memcpy(kind, 10, 20, bytes, false, v1::MEMORY_KIND_PAGEABLE, 7, corr);
  };
  SyntheticTrace d2h;
  one_copy(d2h, v1::COPY_KIND_DTOH, 1 << 20);
  const auto f = RunRule(d2h, CopiesRule, "copies.sync");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].recoverable_ns, 40'000u);  // the host waited in the call

  SyntheticTrace at_limit;
  one_copy(at_limit, v1::COPY_KIND_HTOD, 65536);
  EXPECT_TRUE(RunRule(at_limit, CopiesRule, "copies.sync").empty());
  SyntheticTrace above_limit;
  one_copy(above_limit, v1::COPY_KIND_HTOD, 65537);
  EXPECT_EQ(RunRule(above_limit, CopiesRule, "copies.sync").size(), 1u);
  SyntheticTrace not_spared;
  one_copy(not_spared, v1::COPY_KIND_HTOD, 4096);
  EXPECT_EQ(RunRule(not_spared, CopiesRule, "copies.sync", With({"sync_copy_spare_h2d_bytes=0"})).size(), 1u);

  SyntheticTrace device_to_device;
  one_copy(device_to_device, v1::COPY_KIND_DTOD, 1 << 20);
  EXPECT_TRUE(RunRule(device_to_device, CopiesRule, "copies.sync").empty());
}

TEST(CopiesRule, SynchronousMemsets) {
  SyntheticTrace sync;
  sync.Memset(0, 10, 4096, false);
  EXPECT_EQ(RunRule(sync, CopiesRule, "memset.sync").size(), 1u);
  SyntheticTrace async;
  async.Memset(0, 10, 4096, true);
  EXPECT_TRUE(RunRule(async, CopiesRule, "memset.sync").empty());
  SyntheticTrace below;
  below.Memset(0, 10, 4096, false);
  EXPECT_TRUE(RunRule(below, CopiesRule, "memset.sync", With({"sync_memset_min_count=2"})).empty());
}

}  // namespace
}  // namespace cuscope::analysis
