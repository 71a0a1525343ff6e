// The sync.points rule: a positive case, a negative control, and both sides of each threshold, on
// synthetic timelines.
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
using cuscope::testing::HasOffender;

void SyncEveryStep(SyntheticTrace& s, int steps, bool sync_each) {
  for (int i = 0; i < steps; ++i) {
    const double t0 = i * 100.0;
    s.NvtxRange("train_step", t0, t0 + 99);
    s.Launch("step", t0, 3, t0 + 5, 50);
    if (sync_each || i == steps - 1) s.Api("cudaStreamSynchronize_v3020", t0 + 4, 52);
  }
}

TEST(SyncPointsRule, SyncAfterEveryStepIsReportedWithItsSource) {
  SyntheticTrace s;
  SyncEveryStep(s, 20, true);
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("sync_calls"), 20);
  EXPECT_EQ(*f[0].number("stream_syncs"), 20);
  EXPECT_GT(*f[0].number("waiting_share"), 0.5);
  EXPECT_TRUE(HasOffender(f[0], "cudaStreamSynchronize"));
  EXPECT_TRUE(HasOffender(f[0], "train_step"));
  // After each sync the GPU waits for the next step's kernel: 49 us per step but the last.
  EXPECT_GE(f[0].recoverable_ns, 19u * 49'000u);
}

TEST(SyncPointsRule, OneFinalSyncIsNormal) {
  SyntheticTrace s;
  SyncEveryStep(s, 20, false);
  EXPECT_TRUE(RunRule(s, SyncPointsRule, "sync.points").empty());
}

TEST(SyncPointsRule, ThresholdsBothSides) {
  SyntheticTrace calls_above;
  SyncEveryStep(calls_above, 20, true);
  EXPECT_EQ(RunRule(calls_above, SyncPointsRule, "sync.points", With({"sync_min_calls=20"})).size(), 1u);
  SyntheticTrace calls_below;
  SyncEveryStep(calls_below, 20, true);
  EXPECT_TRUE(RunRule(calls_below, SyncPointsRule, "sync.points", With({"sync_min_calls=21"})).empty());
  SyntheticTrace share_below;
  SyncEveryStep(share_below, 20, true);
  // The idle these syncs cause (49 us a step) reports them on its own: off for the share's edge.
  EXPECT_TRUE(RunRule(share_below, SyncPointsRule, "sync.points",
                      With({"sync_min_share=0.9", "sync_min_caused_idle_share=1"}))
                  .empty());
  SyntheticTrace share_below_idle_above;
  SyncEveryStep(share_below_idle_above, 20, true);
  EXPECT_EQ(RunRule(share_below_idle_above, SyncPointsRule, "sync.points", With({"sync_min_share=0.9"})).size(), 1u);
}

TEST(SyncPointsRule, SyncingEveryStepOfALongLoopIsAnError) {
  SyntheticTrace s;
  SyncEveryStep(s, 200, true);
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_GT(*f[0].number("sync_rate_per_s"), 9000);
}

// A short-lived helper thread that syncs on each of 20 small kernels (half its life waiting) in a
// 100 ms run: reported, but its 2 ms of GPU idle are 2% of the run, not half of the thread's life.
TEST(SyncPointsRule, SeverityFollowsWhatTheRunLosesNotTheThreadsShare) {
  SyntheticTrace s;
  s.Launch("first", 0, 5, 10, 1000);
  for (int i = 0; i < 20; ++i) {
    const double k = 50'000 + 200.0 * i;
    s.Launch("small", k - 20, 5, k, 100);
    s.Api("cudaStreamSynchronize_v3020", k, 100, /*tid=*/2);
  }
  s.Launch("last", 99'000, 5, 99'000, 1000);
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  // The idle after each wait but the last (the thread ends there), at most what it saw idle: 1.9 ms.
  EXPECT_EQ(f[0].recoverable_ns, 1'900'000u);
  EXPECT_GT(*f[0].number("waiting_share"), 0.4);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  // The same waits with the run no longer than the thread: half of it lost, an error.
  SyntheticTrace alone;
  for (int i = 0; i < 20; ++i) {
    const double k = 200.0 * i + 100;
    alone.Launch("small", k - 20, 5, k, 100);
    alone.Api("cudaStreamSynchronize_v3020", k, 100, /*tid=*/2);
  }
  const auto g = RunRule(alone, SyncPointsRule, "sync.points");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].severity, Severity::kError);
}

// The cadence case: every 60 us the host launches three 10 us kernels, reads a scalar back (a 3 us
// wait: the GPU finishes its queue during it), then works 24 us before launching again. Each wait is
// short (5% of the thread's time) but the GPU idles ~29 us after each: half the run.
void ReadBackEveryThreeKernels(SyntheticTrace& s, int steps) {
  for (int i = 0; i < steps; ++i) {
    const double t0 = i * 60.0;
    s.Launch("k1", t0, 5, t0 + 5, 10);
    s.Launch("k2", t0 + 5, 5, t0 + 15, 10);
    s.Launch("k3", t0 + 10, 5, t0 + 25, 10);
    s.Api("cudaStreamSynchronize_v3020", t0 + 33, 3);
  }
}

TEST(SyncPointsRule, ShortWaitsEveryFewKernelsAreReportedByTheIdleTheyCause) {
  SyntheticTrace s;
  ReadBackEveryThreeKernels(s, 100);
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_LT(*f[0].number("waiting_share"), 0.10);  // the old trigger alone stays silent
  EXPECT_EQ(*f[0].number("sync_calls"), 100);
  EXPECT_DOUBLE_EQ(*f[0].number("kernels_per_sync"), 3.0);
  // 29 us after each return but the last (nothing follows it).
  EXPECT_DOUBLE_EQ(*f[0].number("idle_after_sync_mean_ns"), 99.0 * 29'000 / 100);
  // The host queues a step's three kernels faster than the GPU runs them: no gap stays.
  EXPECT_DOUBLE_EQ(*f[0].number("gap_without_syncs_ns"), 0);
  EXPECT_EQ(f[0].recoverable_ns, 99u * 30'000u + 1'000u);
  EXPECT_NE(f[0].headline.find("synchronizes with the GPU 100 times in 5.976 ms"), std::string::npos) << f[0].headline;
  EXPECT_NE(f[0].headline.find("one per 3.0 kernels"), std::string::npos) << f[0].headline;
  EXPECT_NE(f[0].recommendation.find("accumulate on the GPU"), std::string::npos) << f[0].recommendation;
}

// A host slower than the GPU (PyTorch's tiny kernels): a launch every 10 us, each kernel 1 us, a
// read-back after every three. The GPU idles 9 us between kernels whether or not the host syncs, so
// of the 15 us after each return only 6 are the sync's; with the 3 us inside each wait, 9 us a sync.
// Measured on the H200 (examples/torch_item_sync.py and its twin): predicted 32.7 ms, saved 36.7 ms;
// counting the whole refill gap predicted 52.7 ms.
TEST(SyncPointsRule, TheGapAHostSlowerThanTheGpuKeepsAnywayIsNotRecoverable) {
  SyntheticTrace s;
  for (int i = 0; i < 100; ++i) {
    const double t0 = i * 40.0;
    s.Launch("k1", t0, 2, t0 + 3, 1);
    s.Launch("k2", t0 + 10, 2, t0 + 13, 1);
    s.Launch("k3", t0 + 20, 2, t0 + 23, 1);
    s.Api("cudaStreamSynchronize_v3020", t0 + 25, 3);
  }
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(*f[0].number("gap_without_syncs_ns"), 9'000);
  EXPECT_EQ(f[0].recoverable_ns, 99u * 9'000u + 3'000u) << "the last wait has no launch after it";
}

// The same short syncs while the GPU never runs dry (the next step's kernels are queued before the
// wait returns): they cost nothing.
TEST(SyncPointsRule, ShortWaitsWhileTheGpuStaysBusyAreNormal) {
  SyntheticTrace s;
  for (int i = 0; i < 100; ++i) {
    const double t0 = i * 30.0;
    s.Launch("k1", t0, 5, t0 + 5, 10);
    s.Launch("k2", t0 + 5, 5, t0 + 15, 10);
    s.Launch("k3", t0 + 10, 5, t0 + 25, 10);
    s.Api("cudaEventSynchronize_v3020", t0 + 16, 1);
  }
  EXPECT_TRUE(RunRule(s, SyncPointsRule, "sync.points").empty());
}

TEST(SyncPointsRule, CausedIdleThresholdEdges) {
  // The idle the syncs cause: 2,971 us of the thread's 5,976 us, a share of 0.497.
  SyntheticTrace above;
  ReadBackEveryThreeKernels(above, 100);
  EXPECT_EQ(RunRule(above, SyncPointsRule, "sync.points", With({"sync_min_caused_idle_share=0.49"})).size(), 1u);
  SyntheticTrace below;
  ReadBackEveryThreeKernels(below, 100);
  EXPECT_TRUE(RunRule(below, SyncPointsRule, "sync.points", With({"sync_min_caused_idle_share=0.5"})).empty());
}

// 14 phases of 15 ms: a 15 ms kernel, then a sync that waits for it while the GPU is busy; the next
// phase is launched right after.
void SyncAtPhaseEnds(SyntheticTrace& s) {
  for (int i = 0; i < 14; ++i) {
    const double t0 = i * 15'010.0;
    s.Launch("phase", t0, 3, t0 + 5, 15'000);
    s.Api("cudaDeviceSynchronize_v3020", t0 + 4, 15'002);
  }
}

TEST(SyncPointsRule, AFewSyncsAtPhaseEndsAreNormal) {
  SyntheticTrace s;
  SyncAtPhaseEnds(s);  // 14 syncs in 210 ms: 66.6/s, though the thread waits 99% of its time
  EXPECT_TRUE(RunRule(s, SyncPointsRule, "sync.points").empty());
  // Under a lower rate threshold it is reported, but the GPU was busy during the waits: info.
  SyntheticTrace lowered;
  SyncAtPhaseEnds(lowered);
  const auto f = RunRule(lowered, SyncPointsRule, "sync.points", With({"sync_min_rate_per_s=66"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(*f[0].number("gpu_idle_during_waits_ns"), 14 * 2'000.0);
  SyntheticTrace above;
  SyncAtPhaseEnds(above);
  EXPECT_TRUE(RunRule(above, SyncPointsRule, "sync.points", With({"sync_min_rate_per_s=67"})).empty());
}

TEST(SyncPointsRule, SmallReadbacksAndImplicitSyncsAreCounted) {
  SyntheticTrace s;
  for (int i = 0; i < 12; ++i) {
    const double t0 = i * 100.0;
    s.Launch("step", t0, 3, t0 + 5, 50);
    const uint64_t corr = s.Api("cudaMemcpy_v3020", t0 + 4, 60);
    s.Memcpy(v1::COPY_KIND_DTOH, t0 + 56, 2, 4, false, v1::MEMORY_KIND_PAGEABLE, 7, corr);
    s.Api("cudaFree_v3020", t0 + 70, 10);
  }
  const auto f = RunRule(s, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("small_readbacks"), 12);
  EXPECT_EQ(*f[0].number("implicit_syncs_alloc_free"), 12);
  EXPECT_EQ(*f[0].number("synchronous_copies"), 12);
}

// PyTorch's .item(): an asynchronous 4-byte copy to the host, then a stream sync, after every
// three kernels, the thread waiting a large share of its time. The read-back is counted (the copy
// is asynchronous), the cadence is said, and the advice is to accumulate on the GPU. A large copy
// before the sync, or a kernel enqueued between the copy and the sync, is not a read-back.
TEST(SyncPointsRule, AnItemReadBackEveryFewKernelsIsNamed) {
  const auto loop = [](SyntheticTrace& s, uint64_t bytes, bool kernel_between) {
    for (int i = 0; i < 50; ++i) {
      const double t0 = i * 100.0;
      s.Launch("k1", t0, 3, t0 + 4, 10);
      s.Launch("k2", t0 + 4, 3, t0 + 14, 10);
      s.Launch("k3", t0 + 8, 3, t0 + 24, 10);
      const uint64_t corr = s.Api("cudaMemcpyAsync_v3020", t0 + 12, 3);
      s.Memcpy(v1::COPY_KIND_DTOH, t0 + 34, 2, bytes, true, v1::MEMORY_KIND_PAGEABLE, 7, corr);
      if (kernel_between) s.Launch("k4", t0 + 16, 3, t0 + 36, 1);
      s.Api("cudaStreamSynchronize_v3020", t0 + 20, 30);
    }
  };
  SyntheticTrace item;
  loop(item, 4, false);
  const auto f = RunRule(item, SyncPointsRule, "sync.points");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("small_readbacks"), 50);
  EXPECT_NE(f[0].headline.find("waits for the GPU"), std::string::npos) << f[0].headline;
  EXPECT_NE(f[0].headline.find("one per 3.0 kernels"), std::string::npos) << f[0].headline;
  EXPECT_NE(f[0].recommendation.find("50 small D2H read-backs"), std::string::npos) << f[0].recommendation;
  EXPECT_NE(f[0].recommendation.find("accumulate on the GPU"), std::string::npos) << f[0].recommendation;
  SyntheticTrace large;
  loop(large, 1 << 20, false);
  const auto g = RunRule(large, SyncPointsRule, "sync.points");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(*g[0].number("small_readbacks"), 0);
  EXPECT_EQ(g[0].recommendation.find("accumulate on the GPU"), std::string::npos) << g[0].recommendation;
  SyntheticTrace between;
  loop(between, 4, true);
  const auto h = RunRule(between, SyncPointsRule, "sync.points");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(*h[0].number("small_readbacks"), 0);
}

}  // namespace
}  // namespace cuscope::analysis
