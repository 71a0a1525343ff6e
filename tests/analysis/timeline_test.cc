#include "lib/analysis/timeline.h"

#include "gtest/gtest.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;
using cuscope::testing::MetricValues;
using cuscope::testing::Us;

TEST(TimelineTest, BusyIsTheUnionOfStreamsNotTheirSum) {
  SyntheticTrace s;
  s.Kernel("a", 0, 100, /*stream=*/13);
  s.Kernel("b", 50, 100, /*stream=*/14);  // overlaps a by 50 us
  s.Memcpy(v1::COPY_KIND_HTOD, 200, 50, 1024, true);
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.devices()[0].busy_ns(), 200'000u);  // 150 us of kernels + 50 us of copy, not 250
  EXPECT_EQ(t.devices()[0].active.length(), 250'000u);
  EXPECT_EQ(t.streams().size(), 3u);
}

TEST(TimelineTest, ReplayedLaunchesAreLeftOut) {
  SyntheticTrace s;
  s.Kernel("real", 0, 10);
  s.Kernel("replayed", 100, 1000, 7, 0, 0, v1::KERNEL_FLAG_REPLAYED);
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  EXPECT_EQ(t.kernel_count(), 1u);
  EXPECT_EQ(t.replayed_kernel_count(), 1u);
  EXPECT_EQ(t.devices()[0].busy_ns(), 10'000u);
}

TEST(TimelineTest, ALaunchWithAMetricRowIsReplayedEvenWithoutTheFlag) {
  SyntheticTrace s;
  s.Kernel("real", 0, 10);
  // CUPTI's record of the profiled launch, unflagged, with a (bogus) duration of 500 us.
  s.KernelWith(cuscope::testing::Config("profiled", 1, 128), 100, 500, /*correlation=*/77);
  s.Metrics(77, "profiled", 0, 90, 600, {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}});
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  EXPECT_EQ(t.kernel_count(), 1u);
  EXPECT_EQ(t.replayed_kernel_count(), 1u);
  EXPECT_EQ(t.devices()[0].busy_ns(), 10'000u);
  EXPECT_TRUE(t.Profiled(77));
  EXPECT_FALSE(t.Profiled(78));
}

TEST(TimelineTest, IdleTimeInsideMetricWindowsIsSetApart) {
  SyntheticTrace s;
  s.Kernel("a", 0, 10);
  s.Kernel("b", 100'040, 10);
  core::KernelConfig replayed = cuscope::testing::Config("b", 1, 128);
  s.ProfiledLaunch(replayed, 20, 100'000, {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}});
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  ASSERT_EQ(t.devices().size(), 1u);
  const DeviceTimeline& d = t.devices()[0];
  EXPECT_EQ(d.active.length(), 100'050'000u);
  EXPECT_EQ(d.metrics_idle_ns(), 100'000'000u);
  EXPECT_EQ(d.counted_active_ns(), 50'000u);
  EXPECT_EQ(t.metric_window_count(), 1u);
  EXPECT_EQ(TotalLength(t.metric_windows()), 100'000'000u);
}

TEST(TimelineTest, LaunchDelayFromTheCorrelatedCall) {
  SyntheticTrace s;
  s.Launch("k", 0, 5, 25, 10);
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  ASSERT_EQ(trace.kernels.size(), 1u);
  const auto delay = t.LaunchDelay(trace.kernels[0]);
  ASSERT_TRUE(delay.has_value());
  EXPECT_EQ(*delay, 20'000);
  EXPECT_EQ(t.ApiName(*t.ApiFor(trace.kernels[0].correlation_id)), "cudaLaunchKernel");
}

TEST(TimelineTest, EnclosingNvtxRangeIsTheInnermost) {
  SyntheticTrace s;
  s.NvtxRange("step", 0, 100);
  s.NvtxRange("forward", 10, 50);
  s.Api("cudaStreamSynchronize_v3020", 20, 5);
  const core::Trace trace = s.Load();
  const Timeline t = Timeline::Build(trace);
  const uint32_t thread = trace.api_calls[0].thread;
  const NvtxRange* r = t.EnclosingRange(thread, Us(20));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(trace.dict.str(r->name), "forward");
  const NvtxRange* outer = t.EnclosingRange(thread, Us(70));
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(trace.dict.str(outer->name), "step");
  EXPECT_EQ(t.EnclosingRange(thread, Us(150)), nullptr);
}

TEST(ApiNamesTest, VersionSuffixStrippedAndCallsClassified) {
  EXPECT_EQ(core::DisplayApiName("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
  EXPECT_EQ(core::DisplayApiName("cudaGraphLaunch_v10000"), "cudaGraphLaunch");
  // An API's own version is part of its name: cuDeviceGetUuid and cuDeviceGetUuid_v2 are two
  // functions (one trace calls both), two rows of cuda_api_sum, not one name shown twice.
  EXPECT_EQ(core::DisplayApiName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
  EXPECT_EQ(core::DisplayApiName("cuDeviceGetUuid_v2"), "cuDeviceGetUuid_v2");
  EXPECT_EQ(core::DisplayApiName("cudaMemcpy_v302"), "cudaMemcpy_v302");
  EXPECT_EQ(core::DisplayApiName("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(core::ClassifyApi("cudaStreamSynchronize_v3020").sync, core::SyncKind::kStream);
  EXPECT_EQ(core::ClassifyApi("cudaDeviceSynchronize_v3020").sync, core::SyncKind::kDevice);
  EXPECT_TRUE(core::ClassifyApi("cudaMemcpy_v3020").synchronous_transfer);
  EXPECT_FALSE(core::ClassifyApi("cudaMemcpyAsync_v3020").synchronous_transfer);
  EXPECT_TRUE(core::ClassifyApi("cudaFree_v3020").implicit_sync);
  EXPECT_FALSE(core::ClassifyApi("cudaMallocAsync_v11020").implicit_sync);
  EXPECT_EQ(core::ClassifyApi("cudaLaunchKernel_v7000").category, core::ApiCategory::kLaunch);
  EXPECT_TRUE(core::ClassifyApi("cudaGraphLaunch_v10000").graph_launch);
  EXPECT_EQ(core::ClassifyApi("cudaGetDevice_v3020").category, core::ApiCategory::kOther);
  // Graph building, capture and module loading are setup; launching a graph is a launch.
  EXPECT_EQ(core::ClassifyApi("cudaGraphInstantiate_v12000").category, core::ApiCategory::kSetup);
  EXPECT_EQ(core::ClassifyApi("cuGraphAddKernelNode_v2").category, core::ApiCategory::kSetup);
  EXPECT_EQ(core::ClassifyApi("cuModuleLoadData").category, core::ApiCategory::kSetup);
  EXPECT_TRUE(core::ClassifyApi("cudaStreamBeginCapture_v10000").capture_begin);
  EXPECT_TRUE(core::ClassifyApi("cudaStreamEndCapture_v10000").capture_end);
  EXPECT_EQ(core::ClassifyApi("cudaGraphLaunch_v10000").category, core::ApiCategory::kLaunch);
  // The per-thread default-stream variants are the same calls.
  EXPECT_EQ(core::ClassifyApi("cudaStreamSynchronize_ptsz_v7000").sync, core::SyncKind::kStream);
  EXPECT_EQ(core::ClassifyApi("cuStreamSynchronize_ptsz").sync, core::SyncKind::kStream);
  EXPECT_TRUE(core::ClassifyApi("cudaGraphLaunch_ptsz_v10000").graph_launch);
  EXPECT_EQ(core::ClassifyApi("cuGraphLaunch_ptsz").category, core::ApiCategory::kLaunch);
  EXPECT_EQ(core::DisplayApiName("cudaStreamSynchronize_ptsz_v7000"), "cudaStreamSynchronize_ptsz");
}

TEST(TimelineTest, SynchronizationRecordsAreNamedByTheCallsThatMakeThem) {
  EXPECT_EQ(core::SyncRecordTypeOf("cudaStreamSynchronize_v3020"), v1::SYNC_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(core::SyncRecordTypeOf("cuStreamSynchronize_ptsz"), v1::SYNC_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(core::SyncRecordTypeOf("cudaDeviceSynchronize_v3020"), v1::SYNC_TYPE_CONTEXT_SYNCHRONIZE);
  EXPECT_EQ(core::SyncRecordTypeOf("cuCtxSynchronize_v2"), v1::SYNC_TYPE_CONTEXT_SYNCHRONIZE);
  EXPECT_EQ(core::SyncRecordTypeOf("cudaEventSynchronize_v3020"), v1::SYNC_TYPE_EVENT_SYNCHRONIZE);
  EXPECT_EQ(core::SyncRecordTypeOf("cudaStreamWaitEvent_ptsz_v7000"), v1::SYNC_TYPE_STREAM_WAIT_EVENT);
  EXPECT_EQ(core::SyncRecordTypeOf("cuStreamWaitEvent"), v1::SYNC_TYPE_STREAM_WAIT_EVENT);
  // Calls that wait without a synchronization record of their own, and calls that do not wait.
  EXPECT_EQ(core::SyncRecordTypeOf("cudaMemcpy_v3020"), v1::SYNC_TYPE_UNKNOWN);
  EXPECT_EQ(core::SyncRecordTypeOf("cudaStreamQuery_v3020"), v1::SYNC_TYPE_UNKNOWN);
  EXPECT_EQ(core::SyncRecordTypeOf("cudaLaunchKernel_v7000"), v1::SYNC_TYPE_UNKNOWN);
  EXPECT_TRUE(core::PerThreadStreamCall("cudaStreamSynchronize_ptsz_v7000"));
  EXPECT_TRUE(core::PerThreadStreamCall("cudaMemcpyAsync_ptds_v7000"));
  EXPECT_FALSE(core::PerThreadStreamCall("cudaStreamSynchronize_v3020"));
}

TEST(TimelineTest, ReplaysCountAsTheProgramsWorkOnlyWhileTheTimelineWasRecorded) {
  const MetricValues duration = {{"gpu__time_duration.sum", 40'000}};  // 40 us measured
  const core::KernelConfig k = cuscope::testing::Config("k", 1, 128);
  // --metrics: the profiled launch (its call and replayed kernel row) inside the session window.
  SyntheticTrace inside;
  inside.TimelineWindow(0, 1'000'000);
  inside.Kernel("k", 0, 10);
  inside.ProfiledLaunch(k, 100, 300'000, duration);
  const core::Trace a = inside.Load();
  const Timeline ta = Timeline::Build(a);
  EXPECT_EQ(ta.devices()[0].replayed_kernel_ns, 40'000u);
  // Top-down: the same measurement from the metrics phase, with neither row nor call, does not count.
  SyntheticTrace after;
  after.TimelineWindow(0, 1000);
  after.Kernel("k", 0, 10);
  after.TopDown(1100, 10, {{k, 10, 1}});
  after.MetricsAfterWindow(k, 2000, 300'000, duration);
  const core::Trace b = after.Load();
  const Timeline tb = Timeline::Build(b);
  EXPECT_EQ(tb.devices()[0].replayed_kernel_ns, 0u);
  EXPECT_FALSE(tb.ReplayCaptured(b.metrics[0]));
}

}  // namespace
}  // namespace cuscope::analysis
