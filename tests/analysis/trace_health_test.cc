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
