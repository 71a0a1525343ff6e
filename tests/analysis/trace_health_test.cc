// The trace-health warnings: each problem of the trace itself is said once, in a fixed order, and a
// whole trace raises none.
#include "lib/analysis/rules/rules.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;

// A whole trace of two kernels, as written and read back: one chunk, final statistics.
core::Trace WholeTrace() {
  SyntheticTrace s;
  s.Kernel("k", 0, 10);
  s.Kernel("k", 20, 10);
  return s.Load();
}

std::vector<std::string> Warnings(const core::Trace& trace) { return TraceHealthRule(Timeline::Build(trace)); }

TEST(TraceHealthRule, AWholeTraceRaisesNothing) {
  const core::Trace trace = WholeTrace();
  ASSERT_TRUE(trace.stats.has_value());
  EXPECT_TRUE(Warnings(trace).empty());
}

TEST(TraceHealthRule, ACutTailSaysHowManyBytesAndChunksAndNotThatStatisticsAreMissing) {
  core::Trace trace = WholeTrace();
  trace.tail_bytes_dropped = 40;
  trace.stats.reset();  // the final statistics were in the lost tail
  const auto w = Warnings(trace);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "the trace is cut: 40 bytes at its tail did not form a complete chunk and were dropped; the "
                  "analysis covers the 1 complete chunks (records up to the cut)");
}

TEST(TraceHealthRule, DamageNamesTheLastGoodChunkAndTheProblem) {
  core::Trace trace = WholeTrace();
  trace.corruption = absl::DataLossError("bad checksum");
  const auto w = Warnings(trace);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "the trace is damaged after chunk 1 (bad checksum); everything after it is lost");
}

TEST(TraceHealthRule, DroppedRecordsGiveTheirShareAndTheMemoryCap) {
  core::Trace trace = WholeTrace();
  trace.stats->set_records_written(75);
  trace.stats->set_records_dropped_by_cupti(25);
  trace.stats->set_buffers_refused_at_cap(3);
  auto w = Warnings(trace);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("25 records were dropped during capture, 25.0% of all recorded activity (3 buffer requests "
                       "refused at the buffer pool memory cap)",
                       0),
            0u)
      << w[0];
  trace.header.mutable_config()->set_buffer_pool_cap_bytes(uint64_t{64} << 20);
  w = Warnings(trace);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("refused at the 64 MiB memory cap"), std::string::npos) << w[0];
}

TEST(TraceHealthRule, BuffersRefusedWithoutDropsAreWarnedOfToo) {
  core::Trace trace = WholeTrace();
  trace.stats->set_buffers_refused_at_cap(1);
  const auto w = Warnings(trace);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("0 records were dropped during capture, 0.0% of all recorded activity", 0), 0u) << w[0];
}

TEST(TraceHealthRule, DroppedLaunchStacksAreSaidWithWhatToDo) {
  core::Trace trace = WholeTrace();
  trace.stats->set_launch_stacks_dropped(0);
  EXPECT_TRUE(Warnings(trace).empty());
  trace.stats->set_launch_stacks_dropped(1);
  const auto w = Warnings(trace);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "1 launch call stacks were dropped (more launches waited for the writer thread than it keeps): "
                  "launch sites cover fewer launches than were sampled; sample fewer (--stacks every:N or first:K)");
}

TEST(TraceHealthRule, OperationsRunningAtTheEndAndMissingStatisticsComeLastInOrder) {
  core::Trace incomplete = WholeTrace();
  incomplete.stats->set_records_incomplete(988);
  auto w = Warnings(incomplete);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("988 operations were still running when the capture ended", 0), 0u) << w[0];

  core::Trace unfinished = WholeTrace();
  unfinished.stats.reset();
  w = Warnings(unfinished);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "the trace has no final statistics: the session may not have ended cleanly");
  // No chunk at all: nothing to say about statistics.
  unfinished.chunks = 0;
  EXPECT_TRUE(Warnings(unfinished).empty());
}

TEST(TraceHealthRule, SeveralProblemsAreSaidInAFixedOrder) {
  core::Trace trace = WholeTrace();
  trace.corruption = absl::DataLossError("bad checksum");
  trace.tail_bytes_dropped = 8;
  trace.stats->set_records_dropped_by_cupti(1);
  trace.stats->set_records_incomplete(2);
  const auto w = Warnings(trace);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].rfind("the trace is cut", 0), 0u) << w[0];
  EXPECT_EQ(w[1].rfind("the trace is damaged", 0), 0u) << w[1];
  EXPECT_EQ(w[2].rfind("1 records were dropped", 0), 0u) << w[2];
  EXPECT_EQ(w[3].rfind("2 operations were still running", 0), 0u) << w[3];
}

}  // namespace
}  // namespace cuscope::analysis

namespace cuscope::analysis {
namespace {

// `shared` kernels with correlation id 3 (flagged replayed, as the collector flags every kernel of
// a profiled launch's id), `own` kernels with an id each, and a metric row of id 3.
core::Trace StuckTrace(int shared, int own) {
  SyntheticTrace s;
  for (int i = 0; i < shared; ++i) s.Kernel("k", i * 10.0, 5, 7, 3, 0, v1::KERNEL_FLAG_REPLAYED);
  for (int i = 0; i < own; ++i) s.Kernel("k", 100'000 + i * 10.0, 5, 7, 10'000 + i);
  s.Metrics(3, "k", 0, 200'000, 10, {});
  return s.Load();
}

size_t StuckWarnings(const std::vector<std::string>& warnings) {
  size_t n = 0;
  for (const std::string& w : warnings) n += w.find("the same one (3)") != std::string::npos;
  return n;
}

TEST(TraceHealthRule, OneCorrelationIdForMostKernelsIsSaidAndTheKernelsStayOnTheTimeline) {
  const core::Trace trace = StuckTrace(150, 10);
  const Timeline timeline = Timeline::Build(trace);
  ASSERT_TRUE(timeline.stuck_correlation().has_value());
  EXPECT_EQ(timeline.stuck_correlation()->kernels, 150u);
  EXPECT_EQ(timeline.kernel_count(), 160u);
  EXPECT_EQ(timeline.replayed_kernel_count(), 0u);
  EXPECT_FALSE(timeline.Profiled(3)) << "a stuck id marks no launch call as profiling time";
  const std::vector<std::string> warnings = TraceHealthRule(timeline);
  ASSERT_EQ(StuckWarnings(warnings), 1u);
  EXPECT_NE(warnings.back().find("CUPTI gave 150 of the 160 kernels with a correlation id the same one (3)"),
            std::string::npos)
      << warnings.back();
}

TEST(TraceHealthRule, AReplayedRecordOfTheStuckIdStaysOffTheTimeline) {
  SyntheticTrace s;
  for (int i = 0; i < 120; ++i) s.Kernel("k", i * 10.0, 5, 7, 3);
  s.Kernel("k", 5'000, 0, 7, 3, 0, v1::KERNEL_FLAG_REPLAYED);  // no duration: CUPTI's replayed record
  s.Metrics(3, "k", 0, 4'990, 20, {});
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  EXPECT_EQ(timeline.kernel_count(), 120u);
  EXPECT_EQ(timeline.replayed_kernel_count(), 1u);
}

// 200 kernels of one CUDA graph launch share its correlation id, as CUPTI records them: no warning.
TEST(TraceHealthRule, AGraphsKernelsSharingTheirLaunchsIdAreNotStuck) {
  SyntheticTrace s;
  for (int i = 0; i < 200; ++i) s.Kernel("node", i * 10.0, 5, 7, 3, /*graph_id=*/1);
  s.Kernel("k", 5'000, 5, 7, 4);
  const core::Trace trace = s.Load();
  EXPECT_FALSE(Timeline::Build(trace).stuck_correlation().has_value());
  EXPECT_EQ(StuckWarnings(Warnings(trace)), 0u);
}

TEST(TraceHealthRule, StuckNeedsAHundredKernelsAndMoreThanHalf) {
  EXPECT_EQ(StuckWarnings(Warnings(StuckTrace(99, 0))), 0u);   // too few to tell
  EXPECT_EQ(StuckWarnings(Warnings(StuckTrace(100, 0))), 1u);
  EXPECT_EQ(StuckWarnings(Warnings(StuckTrace(100, 100))), 0u);  // half: not most
  EXPECT_EQ(StuckWarnings(Warnings(StuckTrace(101, 100))), 1u);
  // Without the warning the ids are trusted: the flagged kernels stay replayed.
  EXPECT_EQ(Timeline::Build(StuckTrace(99, 0)).replayed_kernel_count(), 99u);
}

}  // namespace
}  // namespace cuscope::analysis
