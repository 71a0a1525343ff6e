#include "lib/cupti/translate.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include <cupti.h>

namespace cuscope::cupti {
namespace {

// Collects what translation hands over.
struct CollectingSink final : core::ActivitySink {
  std::vector<core::KernelActivity> kernels;
  std::vector<std::string> kernel_names;  // the views point into the fabricated records
  std::vector<core::ApiActivity> apis;
  std::vector<core::MemcpyRecord> memcpys;
  std::vector<core::MemsetRecord> memsets;
  std::vector<core::SyncRecord> syncs;
  std::vector<core::NvtxActivity> nvtx;
  std::vector<std::string> nvtx_names;
  std::vector<core::MemoryOpRecord> memory;
  std::vector<core::OverheadActivity> overheads;
  std::vector<core::NvtxPayloadRecord> payloads;
  std::vector<core::RequestScopeActivity> scopes;
  std::vector<uint32_t> untranslated;
  std::vector<uint32_t> incomplete;
  void Add(const core::KernelActivity& a) override {
    kernels.push_back(a);
    kernel_names.emplace_back(a.config.name);
  }
  void Add(const core::ApiActivity& a) override { apis.push_back(a); }
  void Add(const core::MemcpyRecord& r) override { memcpys.push_back(r); }
  void Add(const core::MemsetRecord& r) override { memsets.push_back(r); }
  void Add(const core::SyncRecord& r) override { syncs.push_back(r); }
  void Add(const core::NvtxActivity& a) override {
    nvtx.push_back(a);
    nvtx_names.emplace_back(a.name);
  }
  void Add(const core::MemoryOpRecord& r) override { memory.push_back(r); }
  void Add(const core::OverheadActivity& a) override { overheads.push_back(a); }
  void Add(const core::NvtxPayloadRecord& p) override { payloads.push_back(p); }
  void Add(const core::RequestScopeActivity& r) override { scopes.push_back(r); }
  void AddUntranslated(uint32_t kind) override { untranslated.push_back(kind); }
  void AddIncomplete(uint32_t kind) override { incomplete.push_back(kind); }
};

// CUPTI hands records over as CUpti_Activity pointers to the full struct; so do the tests.
template <typename T>
void Translate(const T& record, core::ActivitySink& sink) {
  const void* bytes = &record;
  TranslateActivity(*static_cast<const CUpti_Activity*>(bytes), sink);
}

template <typename T>
T Zeroed(CUpti_ActivityKind kind) {
  T t;
  std::memset(&t, 0, sizeof(t));
  t.kind = kind;
  return t;
}

TEST(TranslateTest, ConcurrentKernel) {
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 1000;
  k.end = 1704;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 13;
  k.correlationId = 99;
  k.gridX = 1024;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 8;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  k.sharedMemoryExecuted = 32768;
  k.name = "_Z11tiny_kernelPi";
  CollectingSink sink;
  Translate(k, sink);
  ASSERT_EQ(sink.kernels.size(), 1u);
  const auto& a = sink.kernels[0];
  EXPECT_EQ(a.start, 1000u);
  EXPECT_EQ(a.end, 1704u);
  EXPECT_EQ(a.stream, 13u);
  EXPECT_EQ(a.correlation_id, 99u);
  EXPECT_EQ(a.flags, 0u);
  EXPECT_EQ(sink.kernel_names[0], "_Z11tiny_kernelPi");
  EXPECT_EQ(a.config.context, 1u);
  EXPECT_EQ(a.config.grid_x, 1024);
  EXPECT_EQ(a.config.grid_y, 2);
  EXPECT_EQ(a.config.block_x, 256);
  EXPECT_EQ(a.config.registers_per_thread, 32u);
  EXPECT_EQ(a.config.static_shared_memory, 1024);
  EXPECT_EQ(a.config.dynamic_shared_memory, 4096);
  EXPECT_EQ(a.config.local_memory_per_thread, 8u);
  EXPECT_EQ(a.config.launch_type, v1::LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE);
  EXPECT_EQ(a.config.shared_memory_executed, 32768u);
}

TEST(TranslateTest, GraphLaunchedKernelKeepsItsGraph) {
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 10;
  k.end = 20;
  k.graphId = 5;
  k.graphNodeId = 0x100000001ull;
  k.name = "k";
  CollectingSink sink;
  Translate(k, sink);
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_EQ(sink.kernels[0].graph_id, 5u);
  EXPECT_EQ(sink.kernels[0].graph_node_id, 0x100000001ull);
}

// CUPTI fills queued only with latency timestamps on; otherwise it is 0 or UNKNOWN, and the
// kernel has no queue time.
TEST(TranslateTest, KernelQueueTimeOnlyWhenRecorded) {
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 10'000;
  k.end = 12'000;
  k.name = "k";
  k.queued = 7'500;
  k.submitted = 8'000;
  CollectingSink sink;
  Translate(k, sink);
  k.queued = CUPTI_TIMESTAMP_UNKNOWN;
  Translate(k, sink);
  k.queued = 0;
  Translate(k, sink);
  ASSERT_EQ(sink.kernels.size(), 3u);
  EXPECT_EQ(sink.kernels[0].queued, 7'500u);
  EXPECT_EQ(sink.kernels[1].queued, 0u);
  EXPECT_EQ(sink.kernels[2].queued, 0u);
}

TEST(TranslateTest, ZeroDurationKernelIsMarkedReplayed) {
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = 5000;
  k.end = 5000;
  k.name = "vecadd";
  CollectingSink sink;
  Translate(k, sink);
  EXPECT_EQ(sink.kernels[0].flags, static_cast<uint32_t>(v1::KERNEL_FLAG_REPLAYED));
}

TEST(TranslateTest, ReplayedLaunchWithoutTimesIsKeptAtItsProfilingStart) {
  // What the H200 delivers for a launch replayed by the Range Profiler: no timestamps at all.
  auto replayed = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  replayed.name = "fma_chains";
  replayed.correlationId = 169;
  auto running = replayed;  // a different launch, still running when handed over
  running.correlationId = 170;
  auto timed = replayed;  // a profiled launch that did get times: flagged all the same
  timed.correlationId = 171;
  timed.start = 900;
  timed.end = 1900;
  const ReplayedLaunches launches = {{169, 123456}, {171, 800}};
  CollectingSink sink;
  TranslateActivity(reinterpret_cast<const CUpti_Activity&>(replayed), sink, &launches);
  TranslateActivity(reinterpret_cast<const CUpti_Activity&>(running), sink, &launches);
  TranslateActivity(reinterpret_cast<const CUpti_Activity&>(timed), sink, &launches);
  ASSERT_EQ(sink.kernels.size(), 2u);
  EXPECT_EQ(sink.kernels[0].correlation_id, 169u);
  EXPECT_EQ(sink.kernels[0].start, 123456u);
  EXPECT_EQ(sink.kernels[0].end, 123456u);
  EXPECT_EQ(sink.kernels[0].flags, static_cast<uint32_t>(v1::KERNEL_FLAG_REPLAYED));
  EXPECT_EQ(sink.kernels[1].correlation_id, 171u);
  EXPECT_EQ(sink.kernels[1].start, 900u);
  EXPECT_EQ(sink.kernels[1].flags, static_cast<uint32_t>(v1::KERNEL_FLAG_REPLAYED));
  EXPECT_EQ(sink.incomplete.size(), 1u);  // the running one, counted
}

TEST(TranslateTest, UnfinishedActivitiesAreCountedNotWrittenWithoutTimes) {
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = "still_running";  // start and end unset: handed over before it finished
  auto m = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.start = 100;  // started, not ended
  auto s = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  CollectingSink sink;
  Translate(k, sink);
  Translate(m, sink);
  Translate(s, sink);
  EXPECT_TRUE(sink.kernels.empty());
  EXPECT_TRUE(sink.memcpys.empty());
  EXPECT_TRUE(sink.memsets.empty());
  EXPECT_EQ(sink.incomplete.size(), 3u);
}

TEST(TranslateTest, UnnamedKernelGetsAPlaceholder) {
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_KERNEL);
  k.start = 1;
  k.end = 2;
  CollectingSink sink;
  Translate(k, sink);
  EXPECT_EQ(sink.kernel_names[0], "<unnamed kernel>");
}

TEST(TranslateTest, PageableAndPinnedCopies) {
  auto m = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 256ull << 20;
  m.start = 100;
  m.end = 36000100;
  m.streamId = 7;
  m.correlationId = 5;
  auto p = m;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  p.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  p.streamId = 13;
  auto u = m;
  u.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  CollectingSink sink;
  Translate(m, sink);
  Translate(p, sink);
  Translate(u, sink);
  ASSERT_EQ(sink.memcpys.size(), 3u);
  EXPECT_EQ(sink.memcpys[0].copy_kind, v1::COPY_KIND_HTOD);
  EXPECT_EQ(sink.memcpys[0].src_kind, v1::MEMORY_KIND_PAGEABLE);
  EXPECT_EQ(sink.memcpys[0].dst_kind, v1::MEMORY_KIND_DEVICE);
  EXPECT_EQ(sink.memcpys[0].bytes, 256ull << 20);
  EXPECT_FALSE(sink.memcpys[0].async);
  EXPECT_EQ(sink.memcpys[0].end - sink.memcpys[0].start, 36000000u);
  EXPECT_EQ(sink.memcpys[1].copy_kind, v1::COPY_KIND_DTOH);
  EXPECT_EQ(sink.memcpys[1].dst_kind, v1::MEMORY_KIND_PINNED);
  EXPECT_TRUE(sink.memcpys[1].async);
  EXPECT_EQ(sink.memcpys[1].stream, 13u);
  EXPECT_EQ(sink.memcpys[2].src_kind, v1::MEMORY_KIND_MANAGED);
}

TEST(TranslateTest, Memset) {
  auto m = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  m.bytes = 4096;
  m.value = 0xab;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  m.start = 10;
  m.end = 30;
  m.correlationId = 3;
  CollectingSink sink;
  Translate(m, sink);
  ASSERT_EQ(sink.memsets.size(), 1u);
  EXPECT_EQ(sink.memsets[0].bytes, 4096u);
  EXPECT_EQ(sink.memsets[0].value, 0xabu);
  EXPECT_EQ(sink.memsets[0].memory_kind, v1::MEMORY_KIND_DEVICE);
  EXPECT_TRUE(sink.memsets[0].async);
}

TEST(TranslateTest, RuntimeAndDriverCalls) {
  auto r = Zeroed<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  r.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  r.start = 100;
  r.end = 4600;
  r.processId = 321;
  r.threadId = 654;
  r.correlationId = 77;
  r.returnValue = 0;
  auto d = r;
  d.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  d.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  d.returnValue = 700;
  CollectingSink sink;
  Translate(r, sink);
  Translate(d, sink);
  ASSERT_EQ(sink.apis.size(), 2u);
  EXPECT_EQ(sink.apis[0].domain, v1::API_DOMAIN_RUNTIME);
  EXPECT_EQ(sink.apis[0].callback_id, static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(sink.apis[0].pid, 321u);
  EXPECT_EQ(sink.apis[0].tid, 654u);
  EXPECT_EQ(sink.apis[0].correlation_id, 77u);
  EXPECT_EQ(sink.apis[1].domain, v1::API_DOMAIN_DRIVER);
  EXPECT_EQ(sink.apis[1].return_code, 700u);
}

TEST(TranslateTest, SynchronizationTypes) {
  auto s = Zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = 10;
  s.end = 500;
  s.streamId = 13;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.correlationId = 8;
  auto c = s;
  c.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  c.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  auto e = s;
  e.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  e.cudaEventId = 4;
  CollectingSink sink;
  for (const auto* rec : {&s, &c, &e}) Translate(*rec, sink);
  ASSERT_EQ(sink.syncs.size(), 3u);
  EXPECT_EQ(sink.syncs[0].type, v1::SYNC_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(sink.syncs[0].stream, 13u);
  EXPECT_EQ(sink.syncs[1].type, v1::SYNC_TYPE_CONTEXT_SYNCHRONIZE);
  EXPECT_EQ(sink.syncs[1].stream, core::kNoStream);
  EXPECT_EQ(sink.syncs[2].type, v1::SYNC_TYPE_STREAM_WAIT_EVENT);
  EXPECT_EQ(sink.syncs[2].event, 4u);
}

TEST(TranslateTest, NvtxRangeStartEndAndMark) {
  auto start = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  start.timestamp = 100;
  start.id = 1;
  start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  start.objectId.pt.processId = 11;
  start.objectId.pt.threadId = 22;
  start.name = "prefill";
  start.domain = "app";
  auto end = start;
  end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  end.timestamp = 900;
  end.name = nullptr;
  end.domain = nullptr;
  auto mark = start;
  mark.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
  mark.id = 2;
  mark.name = "checkpoint";
  CollectingSink sink;
  for (const auto* rec : {&start, &end, &mark}) Translate(*rec, sink);
  ASSERT_EQ(sink.nvtx.size(), 3u);
  EXPECT_EQ(sink.nvtx[0].kind, v1::NVTX_KIND_RANGE_START);
  EXPECT_EQ(sink.nvtx_names[0], "prefill");
  EXPECT_EQ(sink.nvtx[0].pid, 11u);
  EXPECT_EQ(sink.nvtx[0].tid, 22u);
  EXPECT_EQ(sink.nvtx[1].kind, v1::NVTX_KIND_RANGE_END);
  EXPECT_EQ(sink.nvtx[1].id, 1u);
  EXPECT_TRUE(sink.nvtx[1].name.empty());
  EXPECT_EQ(sink.nvtx[2].kind, v1::NVTX_KIND_MARK);
  EXPECT_EQ(sink.nvtx_names[2], "checkpoint");
}

TEST(TranslateTest, MemoryAllocationAndRelease) {
  auto a = Zeroed<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.bytes = 1 << 20;
  a.address = 0x7f0000000000ull;
  a.timestamp = 55;
  a.correlationId = 9;
  auto r = a;
  r.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  r.isAsync = 1;
  CollectingSink sink;
  Translate(a, sink);
  Translate(r, sink);
  ASSERT_EQ(sink.memory.size(), 2u);
  EXPECT_EQ(sink.memory[0].type, v1::MEMORY_OPERATION_ALLOCATION);
  EXPECT_EQ(sink.memory[0].bytes, 1u << 20);
  EXPECT_EQ(sink.memory[0].address, 0x7f0000000000ull);
  EXPECT_EQ(sink.memory[1].type, v1::MEMORY_OPERATION_RELEASE);
  EXPECT_TRUE(sink.memory[1].async);
}

TEST(TranslateTest, OverheadRecord) {
  auto o = Zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 1;
  o.objectId.pt.threadId = 2;
  o.start = 10;
  o.end = 25010;
  CollectingSink sink;
  Translate(o, sink);
  ASSERT_EQ(sink.overheads.size(), 1u);
  EXPECT_EQ(sink.overheads[0].kind, "cupti buffer flush");
  EXPECT_EQ(sink.overheads[0].end - sink.overheads[0].start, 25000u);
  EXPECT_EQ(sink.overheads[0].tid, 2u);
}

TEST(TranslateTest, KindsNotRecordedAreCountedNotLost) {
  auto n = Zeroed<CUpti_ActivityName>(CUPTI_ACTIVITY_KIND_NAME);
  CollectingSink sink;
  Translate(n, sink);
  ASSERT_EQ(sink.untranslated.size(), 1u);
  EXPECT_EQ(sink.untranslated[0], static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_NAME));
}

}  // namespace
}  // namespace cuscope::cupti
