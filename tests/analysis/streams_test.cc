// The streams.serialized and streams.event_wait rules: a positive case, a negative control, and
// both sides of each threshold, on synthetic timelines.
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

// Two streams taking turns: each kernel waits for the other stream's previous one.
void AlternatingStreams(SyntheticTrace& s, double offset_us) {
  for (int i = 0; i < 20; ++i) {
    s.Kernel("a", i * 20.0, 10, 13);
    s.Kernel("b", i * 20.0 + offset_us, 10, 14);
  }
}

TEST(StreamsRule, InterleavedButNeverOverlappingStreamsAreSerialized) {
  SyntheticTrace s;
  AlternatingStreams(s, 10);
  const auto f = RunRule(s, StreamsRule, "streams.serialized");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("streams"), 2);
  EXPECT_EQ(f[0].recoverable_ns, 200'000u);
  EXPECT_TRUE(HasOffender(f[0], "stream 14"));
  EXPECT_NE(f[0].headline.find("2 streams interleave in time but never run concurrently"), std::string::npos)
      << f[0].headline;
}

// Two work streams that do overlap (kernels 1 us apart), and a 2 us kernel on stream 7 between
// their steps that overlaps neither: only the pairs with stream 7 are serialized, and all a fix can
// recover is stream 7's time (the union of the three streams' busy time minus the busiest).
TEST(StreamsRule, OnlyTheSerializedPairsAreNamedAndTheirTimeClaimed) {
  SyntheticTrace s;
  for (int i = 0; i < 20; ++i) {
    const double t0 = i * 100.0;
    s.Kernel("work_a", t0, 50, 13);
    s.Kernel("work_b", t0 + 1, 50, 14);
    s.Kernel("legacy", t0 + 60, 2, 7);
  }
  const auto f = RunRule(s, StreamsRule, "streams.serialized");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("streams"), 3);
  EXPECT_EQ(*f[0].number("serialized_pairs"), 2);
  // Union per step: 0..51 and 60..62 = 53 us; the busiest stream 50 us a step.
  EXPECT_EQ(f[0].recoverable_ns, 20u * 53'000u - 20u * 50'000u);
  EXPECT_NE(f[0].headline.find("2 of the 3 pairs of 3 interleaving streams never run concurrently (streams "),
            std::string::npos)
      << f[0].headline;
  EXPECT_EQ(f[0].headline.find("3 streams interleave in time but never run concurrently"), std::string::npos)
      << f[0].headline;
}

TEST(StreamsRule, OverlappingStreamsAndSequentialPhasesAreFine) {
  SyntheticTrace overlapping;
  AlternatingStreams(overlapping, 5);
  EXPECT_TRUE(RunRule(overlapping, StreamsRule, "streams.serialized").empty());

  SyntheticTrace phases;
  for (int i = 0; i < 20; ++i) phases.Kernel("a", i * 20.0, 10, 13);
  for (int i = 0; i < 20; ++i) phases.Kernel("b", 1000 + i * 20.0, 10, 14);
  EXPECT_TRUE(RunRule(phases, StreamsRule, "streams.serialized").empty());

  SyntheticTrace ordered;
  AlternatingStreams(ordered, 10);
  ordered.StreamWaitEvent(14, 0, 1);
  EXPECT_TRUE(RunRule(ordered, StreamsRule, "streams.serialized").empty());
}

TEST(StreamsRule, SerializedThresholdsBothSides) {
  SyntheticTrace few_ops;
  AlternatingStreams(few_ops, 10);
  EXPECT_TRUE(RunRule(few_ops, StreamsRule, "streams.serialized", With({"stream_min_ops=21"})).empty());
  SyntheticTrace slight;
  AlternatingStreams(slight, 9.99);  // 0.01 us overlap per pair: 0.1% of busy time
  EXPECT_EQ(RunRule(slight, StreamsRule, "streams.serialized").size(), 1u);
  SyntheticTrace slight_strict;
  AlternatingStreams(slight_strict, 9.99);
  EXPECT_TRUE(RunRule(slight_strict, StreamsRule, "streams.serialized", With({"stream_max_overlap_share=0.0001"})).empty());
}

// Stream 14 waits on an event that a 500 us kernel on stream 13 records; its kernel is launched
// at 11 us but starts only when the producer is done.
void EventStall(SyntheticTrace& s, double consumer_start_us) {
  s.Kernel("producer", 0, 500, 13);
  s.StreamWaitEvent(14, 10, 0.5);
  s.Launch("consumer", 11, 1, consumer_start_us, 50, 14);
}

TEST(StreamsRule, EventWaitStallingAStream) {
  SyntheticTrace s;
  EventStall(s, 500);
  const auto f = RunRule(s, StreamsRule, "streams.event_wait");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].number("stall_ns"), 488'000);
  EXPECT_TRUE(HasOffender(f[0], "consumer"));

  SyntheticTrace no_stall;
  EventStall(no_stall, 13);
  EXPECT_TRUE(RunRule(no_stall, StreamsRule, "streams.event_wait").empty());

  SyntheticTrace above;
  EventStall(above, 500);
  EXPECT_TRUE(RunRule(above, StreamsRule, "streams.event_wait", With({"event_wait_min_share=0.9"})).empty());
}

// Rounds of: stream 13 runs a 100 us producer then an unrelated 1 ms kernel; stream 14 waits on an
// event and runs a 500 us consumer. With the event recorded after the long kernel (`late`), the
// consumer starts when the long kernel ends and runs alone: the streams take turns. Recorded after
// the producer, the consumer runs beside the long kernel.
void ProducerConsumerRounds(SyntheticTrace& s, bool late, int rounds = 20) {
  const double period = late ? 1600 : 1100;
  for (int r = 0; r < rounds; ++r) {
    const double t = r * period;
    s.Kernel("producer", t, 100, 13);
    s.Kernel("unrelated_long", t + 100, 1000, 13);
    s.StreamWaitEvent(14, t + 1, 0.5);
    s.Launch("consumer", t + 2, 1, late ? t + 1100 : t + 100, 500, 14);
  }
}

TEST(StreamsRule, EventWaitThatSerializesStreamsIsReported) {
  SyntheticTrace s;
  ProducerConsumerRounds(s, true);
  const auto f = RunRule(s, StreamsRule, "streams.event_wait");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_GE(f[0].severity, Severity::kWarning);
  // Each round the consumer ran 500 us alone that could have overlapped the long kernel.
  EXPECT_NEAR(*f[0].number("lost_ns"), 20 * 500'000.0, 1.0);
  EXPECT_EQ(f[0].recoverable_ns, 20u * 500'000u);
  EXPECT_TRUE(HasOffender(f[0], "consumer"));
}

TEST(StreamsRule, EventWaitForAProducerWhileTheGpuIsBusyIsPipelining) {
  SyntheticTrace s;
  ProducerConsumerRounds(s, false);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  for (const Finding& f : StreamsRule(timeline, Thresholds())) {
    EXPECT_NE(f.rule_id, "streams.event_wait") << f.headline;
  }
}

TEST(StreamsRule, EventWaitLostShareThresholdBothSides) {
  // Lost 10 ms of a 31.6 ms active span: 31.6%.
  SyntheticTrace below;
  ProducerConsumerRounds(below, true);
  EXPECT_TRUE(RunRule(below, StreamsRule, "streams.event_wait", With({"event_wait_min_share=0.32"})).empty());
  SyntheticTrace above;
  ProducerConsumerRounds(above, true);
  EXPECT_EQ(RunRule(above, StreamsRule, "streams.event_wait", With({"event_wait_min_share=0.31"})).size(), 1u);
}

}  // namespace
}  // namespace cuscope::analysis
