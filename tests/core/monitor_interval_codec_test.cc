#include "lib/core/record_codec/monitor_interval.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace.h"
#include "tests/core/test_traces.h"

namespace cuscope::core {
namespace {

IntervalFigures Sample() {
  IntervalFigures f;
  f.start_ns = 1'000;
  f.end_ns = 1'000'001'000;
  f.launch_calls = 11;
  f.sync_calls = 12;
  f.sync_wait_ns = 13;
  f.records_dropped_by_cupti = 14;
  f.late_records = 15;
  DeviceFigures& d = f.devices.emplace_back();
  d.device = 2;
  d.busy_ns = 21;
  d.idle_ns = 22 + 23 + 24 + 25 + 26 + 27;
  d.idle_by_cause_ns = {22, 23, 24, 25, 26, 27};
  d.kernels = 28;
  d.kernel_gpu_ns = 29;
  d.top_kernels.push_back({"_Z4gemmv", {1, 2, 3}, {4, 5, 6}, 7, 8});
  d.other_kernels = {"", {0, 0, 0}, {0, 0, 0}, 9, 10};
  d.copies.push_back({v1::COPY_KIND_DTOH, v1::MEMORY_KIND_DEVICE, v1::MEMORY_KIND_PINNED, 31, 32, 33});
  d.memsets = 34;
  d.memset_bytes = 35;
  d.memset_ns = 36;
  d.counters.push_back({"nvml.power_w", v1::COUNTER_SOURCE_NVML, 37, 38.5, 39.5});
  return f;
}

// Written into a chunk of a real trace and read back: every figure, names through the dictionary.
TEST(FiguresCodecTest, AnIntervalSurvivesTheTraceFile) {
  core::ChunkBuilder builder(core::testing::FakeApiName);
  const IntervalFigures f = Sample();
  EncodeMonitorInterval(f, [&](std::string_view s) { return builder.InternString(s); }, builder.AddMonitorInterval());
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->monitor_intervals.size(), 1u);
  const IntervalFigures g = DecodeMonitorInterval(trace->monitor_intervals[0], trace->dict);
  EXPECT_EQ(g.start_ns, f.start_ns);
  EXPECT_EQ(g.end_ns, f.end_ns);
  EXPECT_EQ(g.launch_calls, 11u);
  EXPECT_EQ(g.sync_calls, 12u);
  EXPECT_EQ(g.sync_wait_ns, 13u);
  EXPECT_EQ(g.records_dropped_by_cupti, 14u);
  EXPECT_EQ(g.late_records, 15u);
  ASSERT_EQ(g.devices.size(), 1u);
  const DeviceFigures& d = g.devices[0];
  EXPECT_EQ(d.device, 2u);
  EXPECT_EQ(d.busy_ns, 21u);
  EXPECT_EQ(d.idle_ns, f.devices[0].idle_ns);
  EXPECT_EQ(d.idle_by_cause_ns, f.devices[0].idle_by_cause_ns);
  EXPECT_EQ(d.kernels, 28u);
  EXPECT_EQ(d.kernel_gpu_ns, 29u);
  ASSERT_EQ(d.top_kernels.size(), 1u);
  EXPECT_EQ(d.top_kernels[0].name, "_Z4gemmv");
  EXPECT_EQ(d.top_kernels[0].grid, (std::array<uint32_t, 3>{1, 2, 3}));
  EXPECT_EQ(d.top_kernels[0].block, (std::array<uint32_t, 3>{4, 5, 6}));
  EXPECT_EQ(d.top_kernels[0].launches, 7u);
  EXPECT_EQ(d.top_kernels[0].gpu_ns, 8u);
  EXPECT_EQ(d.other_kernels.launches, 9u);
  EXPECT_EQ(d.other_kernels.gpu_ns, 10u);
  ASSERT_EQ(d.copies.size(), 1u);
  EXPECT_EQ(d.copies[0].kind, v1::COPY_KIND_DTOH);
  EXPECT_EQ(d.copies[0].dst_kind, v1::MEMORY_KIND_PINNED);
  EXPECT_EQ(d.copies[0].bytes, 32u);
  EXPECT_EQ(d.memset_ns, 36u);
  ASSERT_EQ(d.counters.size(), 1u);
  EXPECT_EQ(d.counters[0].name, "nvml.power_w");
  EXPECT_EQ(d.counters[0].samples, 37u);
  EXPECT_DOUBLE_EQ(d.counters[0].mean, 38.5);
  EXPECT_DOUBLE_EQ(d.counters[0].max, 39.5);
}

// A duty cycle's estimate says so in the file, with its windows and bounds; a full recording's
// interval reads back as not estimated, with the bound unknown.
TEST(FiguresCodecTest, AnEstimatedIntervalKeepsItsWindowsAndBounds) {
  for (bool estimated : {true, false}) {
    SCOPED_TRACE(estimated);
    core::ChunkBuilder builder(core::testing::FakeApiName);
    IntervalFigures f = Sample();
    if (estimated) {
      f.estimated = true;
      f.observed_ns = 80'000'000;
      f.sample_windows = 8;
      f.count_bound = 0.031;
      f.devices[0].observed_ns = 81'000'000;
      f.devices[0].busy_share_bound = 1.7;
    }
    EncodeMonitorInterval(f, [&](std::string_view s) { return builder.InternString(s); }, builder.AddMonitorInterval());
    v1::Chunk chunk;
    builder.TakeChunk(&chunk);
    auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
    ASSERT_TRUE(trace.ok()) << trace.status();
    const IntervalFigures g = DecodeMonitorInterval(trace->monitor_intervals[0], trace->dict);
    EXPECT_EQ(g.estimated, estimated);
    EXPECT_EQ(g.observed_ns, estimated ? 80'000'000u : 0u);
    EXPECT_EQ(g.sample_windows, estimated ? 8u : 0u);
    EXPECT_DOUBLE_EQ(g.count_bound, estimated ? 0.031 : 0.0);
    EXPECT_EQ(g.devices[0].observed_ns, estimated ? 81'000'000u : 0u);
    EXPECT_DOUBLE_EQ(g.devices[0].busy_share_bound, estimated ? 1.7 : -1.0);
  }
}

// A route's requests survive the file: histograms (trailing empty buckets left out), sums and
// percentiles, the route through the dictionary.
TEST(FiguresCodecTest, RequestsOfARouteSurviveTheTraceFile) {
  core::ChunkBuilder builder(core::testing::FakeApiName);
  IntervalFigures f = Sample();
  RouteRequestFigures& chat = f.requests.emplace_back();
  chat.route = "chat";
  chat.requests = 3;
  for (double s : {0.001, 0.002, 0.030}) {
    chat.span.Add(s);
    chat.gpu.Add(s / 2);
    chat.queue.Add(s / 4);
    chat.idle[static_cast<int>(HostCause::kSync)].Add(s / 8);
  }
  chat.span_p50 = 0.002;
  chat.span_p99 = 0.030;
  chat.span_max = 0.030;
  chat.queue_p99 = 0.0075;
  f.requests.emplace_back().requests = 1;  // no route; `chat` may have moved: read it by index
  const RouteRequestFigures& sent = f.requests[0];
  EncodeMonitorInterval(f, [&](std::string_view s) { return builder.InternString(s); }, builder.AddMonitorInterval());
  v1::Chunk chunk;
  builder.TakeChunk(&chunk);
  auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_FALSE(trace->corruption.has_value());
  const IntervalFigures g = DecodeMonitorInterval(trace->monitor_intervals[0], trace->dict);
  ASSERT_EQ(g.requests.size(), 2u);
  const RouteRequestFigures& r = g.requests[0];
  EXPECT_EQ(r.route, "chat");
  EXPECT_EQ(r.requests, 3u);
  EXPECT_EQ(r.span.counts, sent.span.counts);
  EXPECT_DOUBLE_EQ(r.span.sum_seconds, sent.span.sum_seconds);
  EXPECT_EQ(r.gpu.counts, sent.gpu.counts);
  EXPECT_EQ(r.queue.counts, sent.queue.counts);
  EXPECT_EQ(r.idle[static_cast<int>(HostCause::kSync)].counts, sent.idle[static_cast<int>(HostCause::kSync)].counts);
  EXPECT_EQ(r.idle[static_cast<int>(HostCause::kLaunch)].count(), 0u);  // nothing added: empty again
  EXPECT_DOUBLE_EQ(r.span_p99, 0.030);
  EXPECT_DOUBLE_EQ(r.queue_p99, 0.0075);
  EXPECT_EQ(g.requests[1].route, "");
}

TEST(FiguresCodecTest, ARequestHistogramOfTooManyBucketsIsDamage) {
  v1::Chunk chunk;
  v1::MonitorRouteRequests* r = chunk.add_monitor_intervals()->add_requests();
  for (int i = 0; i < 17; ++i) r->mutable_gpu()->add_buckets(1);
  auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(trace->corruption.has_value());
}

// A damaged file must not hand a reader an undefined name or a device past the limit.
TEST(FiguresCodecTest, AnIntervalNamingAnUndefinedStringIsDamage) {
  v1::Chunk chunk;
  chunk.add_monitor_intervals()->add_devices()->add_top_kernels()->set_name(99);
  auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(trace->corruption.has_value());
  EXPECT_TRUE(trace->monitor_intervals.empty());
}

TEST(FiguresCodecTest, AnIntervalEndingBeforeItStartsIsDamage) {
  v1::Chunk chunk;
  v1::MonitorInterval* m = chunk.add_monitor_intervals();
  m->set_start_ns(10);
  m->set_end_ns(5);
  auto trace = core::LoadTraceFromBytes(core::testing::TraceBytes({chunk}));
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(trace->corruption.has_value());
}

}  // namespace
}  // namespace cuscope::core
