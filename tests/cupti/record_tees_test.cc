// The sinks a session's mode composes: what reaches the trace, the figures and the step range's
// watch, record by record; and the route that composes them once for the mode.
#include "lib/cupti/record_tees.h"

#include "lib/cupti/record_route.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cuscope::cupti {
namespace {

// Each record named by its kind and time, in the order it arrived.
class RecordingSink final : public core::ActivitySink {
 public:
  void Add(const core::KernelActivity& a) override { Note("kernel", a.start); }
  void Add(const core::ApiActivity& a) override { Note("call", a.start); }
  void Add(const core::MemcpyRecord& r) override { Note("memcpy", r.start); }
  void Add(const core::MemsetRecord& r) override { Note("memset", r.start); }
  void Add(const core::SyncRecord& r) override { Note("sync", r.start); }
  void Add(const core::NvtxActivity& a) override { Note("nvtx", a.time); }
  void Add(const core::NvtxPayloadRecord& p) override { Note("payload", p.id); }
  void Add(const core::MemoryOpRecord& r) override { Note("memory", r.time); }
  void Add(const core::OverheadActivity& a) override { Note("overhead", a.start); }
  void Add(const core::RequestScopeActivity& r) override { Note("scope", r.start); }
  void AddUntranslated(uint32_t kind) override { Note("untranslated", kind); }
  void AddIncomplete(uint32_t kind) override { Note("incomplete", kind); }
  std::vector<std::string> seen;

 private:
  void Note(const char* what, uint64_t n) { seen.push_back(std::string(what) + "@" + std::to_string(n)); }
};

core::KernelActivity Kernel(uint64_t start) {
  core::KernelActivity k;
  k.start = start;
  k.end = start + 1;
  return k;
}

core::NvtxActivity Marker(uint64_t time, uint64_t id, v1::NvtxKind kind, const char* name = "step") {
  core::NvtxActivity a;
  a.time = time;
  a.id = id;
  a.kind = kind;
  a.name = name;
  return a;
}

core::NvtxPayloadRecord Payload(uint64_t id) {
  core::NvtxPayloadRecord p;
  p.id = id;
  p.kind = v1::NVTX_PAYLOAD_KIND_UINT64;
  p.bits = 42;
  return p;
}

TEST(InSpansTest, BothEndsBelongToTheSpanAndTheGapsToNone) {
  const std::vector<TraceSpan> spans = {{100, 200}, {300, 400}, {500, UINT64_MAX}};
  EXPECT_FALSE(InSpans(99, spans));
  EXPECT_TRUE(InSpans(100, spans));
  EXPECT_TRUE(InSpans(200, spans));
  EXPECT_FALSE(InSpans(201, spans));
  EXPECT_FALSE(InSpans(299, spans));
  EXPECT_TRUE(InSpans(350, spans));
  EXPECT_FALSE(InSpans(401, spans));
  EXPECT_TRUE(InSpans(UINT64_MAX - 1, spans));  // the open span
  EXPECT_FALSE(InSpans(150, {}));
}

TEST(SpanFilterTest, KeepsEachRecordByItsOwnStartAndLetsOnlyThoseInsideThrough) {
  RecordingSink trace;
  SpanFilter filter(trace);
  EXPECT_FALSE(filter.has_spans());
  filter.SetSpans({{100, 200}});
  EXPECT_TRUE(filter.has_spans());
  filter.Add(Kernel(50));
  filter.Add(Kernel(150));
  core::MemoryOpRecord memory;
  memory.time = 201;
  filter.Add(memory);
  memory.time = 200;
  filter.Add(memory);
  filter.AddUntranslated(7);  // counted whatever its time: the trace says what it could not read
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@150", "memory@200", "untranslated@7"}));
}

TEST(SpanFilterTest, AMarkersPayloadGoesWhereItsMarkerWent) {
  RecordingSink trace;
  SpanFilter filter(trace);
  filter.SetSpans({{100, 200}});
  filter.Add(Marker(150, 1, v1::NVTX_KIND_MARK));
  filter.Add(Payload(1));
  filter.Add(Marker(250, 2, v1::NVTX_KIND_MARK));
  filter.Add(Payload(2));
  filter.Add(Payload(3));  // no marker of that id was kept
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"nvtx@150", "payload@1"}));
}

TEST(SpanFilterTest, APayloadWhoseMarkerWasForgottenIsLeftOut) {
  RecordingSink trace;
  SpanFilter filter(trace);
  filter.SetSpans({{0, UINT64_MAX}});
  filter.Add(Marker(1, 1, v1::NVTX_KIND_MARK));
  for (uint64_t id = 2; id <= SpanFilter::kMaxMarkersAwaitingPayload; ++id) filter.Add(Marker(id, id, v1::NVTX_KIND_MARK));
  filter.Add(Marker(9999, 9999, v1::NVTX_KIND_MARK));  // the set was full: it starts afresh
  trace.seen.clear();
  filter.Add(Payload(1));
  filter.Add(Payload(9999));
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"payload@9999"}));
}

TEST(MonitorTeeTest, TheFiguresTakeEveryRecordAndTheTraceOnlyWhileSwitchedOn) {
  RecordingSink figures, trace;
  MonitorTee tee(figures, trace);
  tee.Add(Kernel(10));
  tee.Add(Payload(5));
  tee.AddIncomplete(3);
  tee.set_trace_on(true);
  tee.Add(Kernel(20));
  tee.Add(Payload(6));
  tee.AddIncomplete(4);
  tee.set_trace_on(false);
  tee.Add(Kernel(30));
  EXPECT_EQ(figures.seen, (std::vector<std::string>{"kernel@10", "kernel@20", "kernel@30"}));
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@20", "payload@6", "incomplete@4"}));
}

TEST(FlightTeeTest, EveryRecordReachesTheTraceAndTheFiguresAndASlowStepIsSaid) {
  RecordingSink trace, figures;
  core::StepRangeWatch watch("step", /*threshold_ns=*/100);
  std::vector<uint64_t> slow;
  FlightTee tee(trace, &watch, [&slow](uint64_t length) { slow.push_back(length); }, &figures);
  tee.Add(Marker(1000, 1, v1::NVTX_KIND_RANGE_START));
  tee.Add(Payload(1));
  tee.Add(Kernel(1010));
  tee.Add(Marker(1100, 1, v1::NVTX_KIND_RANGE_END));  // 100 ns: at the threshold, not over it
  tee.Add(Marker(2000, 2, v1::NVTX_KIND_RANGE_START));
  tee.Add(Marker(2101, 2, v1::NVTX_KIND_RANGE_END));  // 101 ns: slow
  tee.Add(Marker(3000, 3, v1::NVTX_KIND_RANGE_START, "other"));
  tee.Add(Marker(9000, 3, v1::NVTX_KIND_RANGE_END, "other"));  // not the watched name
  EXPECT_EQ(slow, (std::vector<uint64_t>{101}));
  EXPECT_EQ(trace.seen.size(), 8u);
  EXPECT_EQ(trace.seen[1], "payload@1");
  EXPECT_EQ(figures.seen.size(), 7u);  // payloads annotate the trace's markers, not the figures
}

TEST(FlightTeeTest, WithoutAWatchOrFiguresItIsTheTraceAlone) {
  RecordingSink trace;
  FlightTee tee(trace, nullptr, nullptr, nullptr);
  tee.Add(Marker(1, 1, v1::NVTX_KIND_RANGE_START));
  tee.Add(Marker(1000, 1, v1::NVTX_KIND_RANGE_END));
  tee.Add(Kernel(5));
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"nvtx@1", "nvtx@1000", "kernel@5"}));
}

// Sends a kernel starting at each time through the sink the route chooses for one buffer.
void Buffer(RecordRoute& route, bool trace_failed, std::initializer_list<uint64_t> starts) {
  core::ActivitySink* sink = route.SinkForBuffer(trace_failed);
  ASSERT_NE(sink, nullptr);
  for (uint64_t start : starts) sink->Add(Kernel(start));
}

TEST(RecordRouteTest, TraceModeSendsEveryRecordToTheTraceUntilAWriteFails) {
  RecordingSink trace;
  RecordRoute route(settings::CollectionMode::kTrace, trace, nullptr, nullptr, nullptr);
  Buffer(route, false, {10, 20});
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@10", "kernel@20"}));
  EXPECT_EQ(route.SinkForBuffer(true), nullptr);  // nothing more is written: the records go nowhere
  EXPECT_TRUE(route.counters_reach_trace());
}

TEST(RecordRouteTest, TraceModeWithHeldKindsKeepsOnlyWhatStartedInsideATimelineSpan) {
  RecordingSink trace;
  RecordRoute route(settings::CollectionMode::kTrace, trace, nullptr, nullptr, nullptr);
  route.FilterToTimelineSpans();
  Buffer(route, false, {5});  // no span yet: nothing
  route.OpenTimelineSpan(100);
  Buffer(route, false, {99, 100, 150});
  route.CloseTimelineSpan(200);
  route.CloseTimelineSpan(300);  // a span closes once: the second close is not a new end
  // A buffer handed over after the span closed still holds records from inside it.
  Buffer(route, false, {200, 201, 250});
  route.OpenTimelineSpan(400);
  Buffer(route, false, {350, 500});
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@100", "kernel@150", "kernel@200", "kernel@500"}));
  EXPECT_EQ(route.SinkForBuffer(true), nullptr);
}

TEST(RecordRouteTest, TraceModeKeepsTheLatestTimelineSpans) {
  RecordingSink trace;
  RecordRoute route(settings::CollectionMode::kTrace, trace, nullptr, nullptr, nullptr);
  route.FilterToTimelineSpans();
  for (uint64_t i = 0; i <= RecordRoute::kKeptTimelineSpans; ++i) {  // one more than are kept
    route.OpenTimelineSpan(10 * i);
    route.CloseTimelineSpan(10 * i + 5);
  }
  Buffer(route, false, {2, 12, 10 * RecordRoute::kKeptTimelineSpans + 1});
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@12", "kernel@" + std::to_string(10 * RecordRoute::kKeptTimelineSpans + 1)}));
}

TEST(RecordRouteTest, MonitorModeFoldsEveryRecordAndTracesOnlyInsideItsWindows) {
  RecordingSink trace, figures;
  RecordRoute route(settings::CollectionMode::kMonitor, trace, &figures, nullptr, nullptr);
  EXPECT_FALSE(route.counters_reach_trace());  // GPU counter samples too: only inside a window
  Buffer(route, false, {10});
  route.OpenTraceSpan(100);
  EXPECT_TRUE(route.counters_reach_trace());
  Buffer(route, false, {50, 100, 150});
  route.CloseTraceSpan(200);
  EXPECT_FALSE(route.counters_reach_trace());
  Buffer(route, false, {190, 210});
  EXPECT_EQ(figures.seen, (std::vector<std::string>{"kernel@10", "kernel@50", "kernel@100", "kernel@150", "kernel@190",
                                                    "kernel@210"}));
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@100", "kernel@150", "kernel@190"}));
  // A failed write: the trace takes nothing more, the figures go on.
  trace.seen.clear();
  figures.seen.clear();
  route.OpenTraceSpan(300);
  Buffer(route, true, {350});
  EXPECT_TRUE(trace.seen.empty());
  EXPECT_EQ(figures.seen, (std::vector<std::string>{"kernel@350"}));
}

// A second close ends nothing: the window keeps the end it had.
TEST(RecordRouteTest, MonitorModeACloseEndsOnlyTheOpenWindow) {
  RecordingSink trace, figures;
  RecordRoute route(settings::CollectionMode::kMonitor, trace, &figures, nullptr, nullptr);
  route.OpenTraceSpan(100);
  route.CloseTraceSpan(200);
  route.CloseTraceSpan(300);  // already closed: 200 stays its end
  route.OpenTraceSpan(400);
  Buffer(route, false, {250, 500});
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@500"}));
  EXPECT_TRUE(route.counters_reach_trace());
}

TEST(RecordRouteTest, MonitorModeKeepsTheLatestTraceWindows) {
  RecordingSink trace, figures;
  RecordRoute route(settings::CollectionMode::kMonitor, trace, &figures, nullptr, nullptr);
  for (uint64_t i = 0; i <= RecordRoute::kKeptTraceSpans; ++i) {  // one more than are kept
    route.OpenTraceSpan(100 * i);
    route.CloseTraceSpan(100 * i + 50);
  }
  Buffer(route, false, {10, 110, 100 * RecordRoute::kKeptTraceSpans + 10});
  EXPECT_EQ(trace.seen,
            (std::vector<std::string>{"kernel@110", "kernel@" + std::to_string(100 * RecordRoute::kKeptTraceSpans + 10)}));
  EXPECT_EQ(figures.seen.size(), 3u);
}

TEST(RecordRouteTest, FlightModeTeesOnlyWithATrigger) {
  RecordingSink trace, figures;
  RecordRoute with_figures(settings::CollectionMode::kFlight, trace, &figures, nullptr, nullptr);
  Buffer(with_figures, false, {10});
  EXPECT_EQ(trace.seen, (std::vector<std::string>{"kernel@10"}));
  EXPECT_EQ(figures.seen, (std::vector<std::string>{"kernel@10"}));
  EXPECT_EQ(with_figures.SinkForBuffer(true), nullptr);  // the ring takes nothing more: nor does the trigger

  RecordingSink ring;
  core::StepRangeWatch watch("step", /*threshold_ns=*/100);
  std::vector<uint64_t> slow;
  RecordRoute with_watch(settings::CollectionMode::kFlight, ring, nullptr, &watch,
                         [&slow](uint64_t length) { slow.push_back(length); });
  core::ActivitySink* sink = with_watch.SinkForBuffer(false);
  ASSERT_NE(sink, nullptr);
  sink->Add(Marker(1000, 1, v1::NVTX_KIND_RANGE_START));
  sink->Add(Marker(1500, 1, v1::NVTX_KIND_RANGE_END));
  EXPECT_EQ(slow, (std::vector<uint64_t>{500}));
  EXPECT_EQ(ring.seen.size(), 2u);

  RecordingSink alone;
  RecordRoute without(settings::CollectionMode::kFlight, alone, nullptr, nullptr, nullptr);
  EXPECT_EQ(without.SinkForBuffer(false), &alone);  // no trigger: straight to the ring
  EXPECT_TRUE(without.counters_reach_trace());
}

}  // namespace
}  // namespace cuscope::cupti
