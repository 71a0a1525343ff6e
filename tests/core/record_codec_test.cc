// Round trip of each record kind through its codec (lib/core/record_codec/): a record with every
// field set to a value no other field has is encoded, decoded, and must come back field by field.
// A field one side forgets, or two fields swapped, fail here.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/dictionary.h"
#include "lib/core/record_codec/request_scope.h"
#include "lib/core/record_codec/api_call.h"
#include "lib/core/record_codec/counter_series.h"
#include "lib/core/record_codec/kernel.h"
#include "lib/core/record_codec/kernel_metrics.h"
#include "lib/core/record_codec/memcpy.h"
#include "lib/core/record_codec/memory_operation.h"
#include "lib/core/record_codec/memset.h"
#include "lib/core/record_codec/nvtx_marker.h"
#include "lib/core/record_codec/overhead.h"
#include "lib/core/record_codec/synchronization.h"
#include "lib/core/record_codec/top_down.h"

namespace cuscope::core {
namespace {

// A chunk's base time as real traces have them (CUPTI timestamps near 2026).
constexpr uint64_t kBase = 1'764'000'000'000'000'000ull;
// How many strings, threads and API functions Definitions() defines.
constexpr uint32_t kDefined = 8;

// A dictionary that defines strings, host threads and API functions 1..kDefined.
Dictionary Definitions() {
  v1::Chunk chunk;
  for (uint32_t id = 1; id <= kDefined; ++id) {
    v1::InternedString* s = chunk.add_strings();
    s->set_id(id);
    s->set_value("s" + std::to_string(id));
    v1::HostThread* t = chunk.add_threads();
    t->set_id(id);
    t->set_pid(1000 + id);
    t->set_tid(2000 + id);
    v1::ApiFunction* f = chunk.add_api_functions();
    f->set_id(id);
    f->set_domain(v1::API_DOMAIN_DRIVER);
    f->set_callback_id(300 + id);
    f->set_name(id);
  }
  Dictionary dict;
  EXPECT_TRUE(dict.Absorb(chunk).ok());
  return dict;
}

class RecordCodecTest : public ::testing::Test {
 protected:
  Dictionary dict_ = Definitions();
  ChunkContext chunk_{dict_, kBase, /*sequence=*/3};
};

// Sets the fields copies and memsets share to values from `seed` up, each its own.
template <typename Record>
void FillCopyAndMemsetFields(uint64_t seed, Record* r) {
  r->start = kBase + seed * 100;
  r->end = r->start + seed * 1000 + 1;
  r->bytes = (seed + 1) << 40;
  r->device = static_cast<uint32_t>(seed % kMaxDevices);
  r->context = static_cast<uint32_t>(seed + 2);
  r->stream = static_cast<uint32_t>(seed + 3);
  r->correlation_id = seed + 4;
  r->async = true;
  r->graph_id = static_cast<uint32_t>(seed + 5);
  r->graph_node_id = seed + 6;
}

template <typename Record>
void ExpectSameCopyAndMemsetFields(const Record& out, const Record& in) {
  EXPECT_EQ(out.start, in.start);
  EXPECT_EQ(out.end, in.end);
  EXPECT_EQ(out.bytes, in.bytes);
  EXPECT_EQ(out.device, in.device);
  EXPECT_EQ(out.context, in.context);
  EXPECT_EQ(out.stream, in.stream);
  EXPECT_EQ(out.correlation_id, in.correlation_id);
  EXPECT_EQ(out.async, in.async);
  EXPECT_EQ(out.graph_id, in.graph_id);
  EXPECT_EQ(out.graph_node_id, in.graph_node_id);
}

TEST_F(RecordCodecTest, KernelLaunchAndSignatureRoundTrip) {
  KernelActivity in;
  in.start = kBase + 101;
  in.end = kBase + 1101;
  in.correlation_id = 9'000'000'001;
  in.stream = 21;
  in.graph_id = 22;
  in.graph_node_id = 23'000'000'000;
  in.flags = v1::KERNEL_FLAG_REPLAYED;
  in.queued = kBase + 1;  // 100 ns before its start
  KernelConfig& c = in.config;
  c.device = 5;
  c.context = 6;
  c.grid_x = 7, c.grid_y = 8, c.grid_z = 9;
  c.block_x = 10, c.block_y = 11, c.block_z = 12;
  c.registers_per_thread = 13;
  c.static_shared_memory = 14;
  c.dynamic_shared_memory = 15;
  c.local_memory_per_thread = 16;
  c.launch_type = v1::LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE;
  c.cluster_x = 17, c.cluster_y = 18, c.cluster_z = 19;
  c.shared_memory_executed = 20;
  c.device_launched = true;
  // A second launch earlier and with a smaller correlation id: the deltas go negative.
  KernelActivity earlier = in;
  earlier.start = kBase + 50;
  earlier.end = kBase + 40;  // ends before it starts: an empty span
  earlier.correlation_id = 4;
  earlier.graph_id = earlier.graph_node_id = earlier.flags = 0;
  earlier.queued = 0;  // not recorded

  const uint32_t name = 2, signature = 1;
  v1::KernelSignature encoded_signature;
  EncodeKernelSignature(KernelSignatureKeyOf(c, name), signature, &encoded_signature);
  ASSERT_TRUE(CheckKernelSignature(encoded_signature).ok());
  v1::Chunk with_signature;
  *with_signature.add_kernel_signatures() = encoded_signature;
  ASSERT_TRUE(dict_.Absorb(with_signature).ok());
  v1::KernelColumns columns;
  KernelColumnEncoder encoder;
  encoder.Append(in, signature, kBase, &columns);
  encoder.Append(earlier, signature, kBase, &columns);
  std::vector<KernelRow> rows;
  ASSERT_TRUE(DecodeKernelColumns(columns, chunk_, &rows).ok());

  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].start, in.start);
  EXPECT_EQ(rows[0].end, in.end);
  EXPECT_EQ(rows[0].correlation_id, in.correlation_id);
  EXPECT_EQ(rows[0].signature, signature);
  EXPECT_EQ(rows[0].stream, in.stream);
  EXPECT_EQ(rows[0].graph_id, in.graph_id);
  EXPECT_EQ(rows[0].graph_node_id, in.graph_node_id);
  EXPECT_EQ(rows[0].flags, in.flags);
  EXPECT_EQ(rows[0].queued, in.queued);
  EXPECT_EQ(rows[1].queued, 0u);
  EXPECT_EQ(rows[1].start, earlier.start);
  EXPECT_EQ(rows[1].end, earlier.start);
  EXPECT_EQ(rows[1].correlation_id, earlier.correlation_id);
  EXPECT_EQ(rows[1].graph_id, 0u);
  EXPECT_EQ(rows[1].flags, 0u);

  const v1::KernelSignature& s = dict_.signature(rows[0].signature);
  EXPECT_EQ(s.name(), name);
  EXPECT_EQ(s.device(), c.device);
  EXPECT_EQ(s.context(), c.context);
  EXPECT_EQ(s.grid_x(), c.grid_x);
  EXPECT_EQ(s.grid_y(), c.grid_y);
  EXPECT_EQ(s.grid_z(), c.grid_z);
  EXPECT_EQ(s.block_x(), c.block_x);
  EXPECT_EQ(s.block_y(), c.block_y);
  EXPECT_EQ(s.block_z(), c.block_z);
  EXPECT_EQ(s.registers_per_thread(), c.registers_per_thread);
  EXPECT_EQ(s.static_shared_memory(), c.static_shared_memory);
  EXPECT_EQ(s.dynamic_shared_memory(), c.dynamic_shared_memory);
  EXPECT_EQ(s.local_memory_per_thread(), c.local_memory_per_thread);
  EXPECT_EQ(s.launch_type(), c.launch_type);
  EXPECT_EQ(s.cluster_x(), c.cluster_x);
  EXPECT_EQ(s.cluster_y(), c.cluster_y);
  EXPECT_EQ(s.cluster_z(), c.cluster_z);
  EXPECT_EQ(s.shared_memory_executed(), c.shared_memory_executed);
  EXPECT_EQ(s.device_launched(), c.device_launched);
}

// Queue times are an optional column: absent when no launch has one, and a queue time after the
// kernel's start (clocks of host and GPU apart) survives as a negative lead.
TEST_F(RecordCodecTest, QueueTimesAreAnOptionalColumn) {
  v1::Chunk with_signature;
  EncodeKernelSignature(KernelSignatureKeyOf(KernelConfig{}, 2), 1, with_signature.add_kernel_signatures());
  ASSERT_TRUE(dict_.Absorb(with_signature).ok());
  KernelActivity a;
  a.start = kBase + 1000;
  a.end = kBase + 2000;
  v1::KernelColumns without;
  KernelColumnEncoder().Append(a, 1, kBase, &without);
  EXPECT_EQ(without.queued_lead_size(), 0);

  v1::KernelColumns with;
  KernelColumnEncoder encoder;
  encoder.Append(a, 1, kBase, &with);
  KernelActivity late = a;
  late.queued = a.start + 30;
  encoder.Append(late, 1, kBase, &with);
  ASSERT_EQ(with.queued_lead_size(), 2);
  std::vector<KernelRow> rows;
  ASSERT_TRUE(DecodeKernelColumns(with, chunk_, &rows).ok());
  EXPECT_EQ(rows[0].queued, 0u);
  EXPECT_EQ(rows[1].queued, late.queued);

  with.mutable_queued_lead()->RemoveLast();
  EXPECT_FALSE(DecodeKernelColumns(with, chunk_, &rows).ok());
}

TEST_F(RecordCodecTest, LaunchesOfOtherConfigurationsGetOtherSignatureKeys) {
  KernelConfig c;
  c.grid_x = 4;
  KernelConfig other_cluster = c;
  other_cluster.cluster_z = 2;
  EXPECT_EQ(KernelSignatureKeyOf(c, 1), KernelSignatureKeyOf(c, 1));
  EXPECT_FALSE(KernelSignatureKeyOf(c, 1) == KernelSignatureKeyOf(other_cluster, 1));
  EXPECT_FALSE(KernelSignatureKeyOf(c, 1) == KernelSignatureKeyOf(c, 2));
}

TEST_F(RecordCodecTest, ApiCallRoundTrips) {
  ApiActivity in;
  in.start = kBase + 201;
  in.end = kBase + 1202;
  in.correlation_id = 31;
  in.return_code = 32;
  ApiActivity next = in;
  next.start = kBase + 150;
  next.correlation_id = 30;
  next.return_code = 0;
  const uint32_t function = 5, thread = 6;
  v1::ApiCallColumns columns;
  ApiCallColumnEncoder encoder;
  encoder.Append(in, function, thread, kBase, &columns);
  encoder.Append(next, function - 1, thread + 1, kBase, &columns);
  std::vector<ApiCallRow> rows;
  ASSERT_TRUE(DecodeApiCallColumns(columns, chunk_, &rows).ok());

  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].start, in.start);
  EXPECT_EQ(rows[0].end, in.end);
  EXPECT_EQ(rows[0].correlation_id, in.correlation_id);
  EXPECT_EQ(rows[0].function, function);
  EXPECT_EQ(rows[0].thread, thread);
  EXPECT_EQ(rows[0].return_code, in.return_code);
  EXPECT_EQ(rows[1].start, next.start);
  EXPECT_EQ(rows[1].correlation_id, next.correlation_id);
  EXPECT_EQ(rows[1].function, function - 1);
  EXPECT_EQ(rows[1].thread, thread + 1);
  EXPECT_EQ(rows[1].return_code, 0u);
}

TEST_F(RecordCodecTest, MemcpyRoundTrips) {
  MemcpyRecord in;
  FillCopyAndMemsetFields(40, &in);
  in.device = kMaxDevices - 1;
  in.copy_kind = v1::COPY_KIND_PTOP;
  in.src_kind = v1::MEMORY_KIND_MANAGED;
  in.dst_kind = v1::MEMORY_KIND_DEVICE_STATIC;
  v1::Memcpy encoded;
  EncodeMemcpy(in, kBase, &encoded);
  MemcpyRecord out;
  ASSERT_TRUE(DecodeMemcpy(encoded, chunk_, &out).ok());

  ExpectSameCopyAndMemsetFields(out, in);
  EXPECT_EQ(out.copy_kind, in.copy_kind);
  EXPECT_EQ(out.src_kind, in.src_kind);
  EXPECT_EQ(out.dst_kind, in.dst_kind);
}

TEST_F(RecordCodecTest, MemsetRoundTrips) {
  MemsetRecord in;
  FillCopyAndMemsetFields(50, &in);
  in.start = kBase - 50;  // before the chunk's base time: a negative offset
  in.value = 0xabcdef;
  in.memory_kind = v1::MEMORY_KIND_PINNED;
  v1::Memset encoded;
  EncodeMemset(in, kBase, &encoded);
  MemsetRecord out;
  ASSERT_TRUE(DecodeMemset(encoded, chunk_, &out).ok());

  ExpectSameCopyAndMemsetFields(out, in);
  EXPECT_EQ(out.value, in.value);
  EXPECT_EQ(out.memory_kind, in.memory_kind);
}

TEST_F(RecordCodecTest, SynchronizationRoundTrips) {
  SyncRecord in;
  in.start = kBase + 501;
  in.end = kBase + 1502;
  in.type = v1::SYNC_TYPE_STREAM_WAIT_EVENT;
  in.context = 61;
  in.stream = 62;
  in.event = 63;
  in.correlation_id = 64;
  v1::Synchronization encoded;
  EncodeSynchronization(in, kBase, &encoded);
  SyncRecord out;
  ASSERT_TRUE(DecodeSynchronization(encoded, chunk_, &out).ok());

  EXPECT_EQ(out.start, in.start);
  EXPECT_EQ(out.end, in.end);
  EXPECT_EQ(out.type, in.type);
  EXPECT_EQ(out.context, in.context);
  EXPECT_EQ(out.stream, in.stream);
  EXPECT_EQ(out.event, in.event);
  EXPECT_EQ(out.correlation_id, in.correlation_id);
}

TEST_F(RecordCodecTest, NvtxMarkerRoundTrips) {
  NvtxActivity in;
  in.time = kBase + 601;
  in.kind = v1::NVTX_KIND_RANGE_START;
  in.id = 71;
  const uint32_t thread = 3, name = 4, domain = 5;
  v1::NvtxMarker encoded;
  EncodeNvtxMarker(in, thread, name, domain, kBase, &encoded);
  NvtxRow out;
  ASSERT_TRUE(DecodeNvtxMarker(encoded, chunk_, &out).ok());

  EXPECT_EQ(out.time, in.time);
  EXPECT_EQ(out.kind, in.kind);
  EXPECT_EQ(out.id, in.id);
  EXPECT_EQ(out.thread, thread);
  EXPECT_EQ(out.name, name);
  EXPECT_EQ(out.domain, domain);
}

TEST_F(RecordCodecTest, MemoryOperationRoundTrips) {
  MemoryOpRecord in;
  in.time = kBase + 701;
  in.type = v1::MEMORY_OPERATION_RELEASE;
  in.memory_kind = v1::MEMORY_KIND_ARRAY;
  in.bytes = 81;
  in.address = 0x7f00'0000'0082;
  in.device = 83;  // not bounded: only `cuscope dump` prints it
  in.context = 84;
  in.stream = 85;
  in.correlation_id = 86;
  in.async = true;
  v1::MemoryOperation encoded;
  EncodeMemoryOperation(in, kBase, &encoded);
  MemoryOpRecord out;
  ASSERT_TRUE(DecodeMemoryOperation(encoded, chunk_, &out).ok());

  EXPECT_EQ(out.time, in.time);
  EXPECT_EQ(out.type, in.type);
  EXPECT_EQ(out.memory_kind, in.memory_kind);
  EXPECT_EQ(out.bytes, in.bytes);
  EXPECT_EQ(out.address, in.address);
  EXPECT_EQ(out.device, in.device);
  EXPECT_EQ(out.context, in.context);
  EXPECT_EQ(out.stream, in.stream);
  EXPECT_EQ(out.correlation_id, in.correlation_id);
  EXPECT_EQ(out.async, in.async);
}

TEST_F(RecordCodecTest, OverheadRoundTrips) {
  OverheadActivity in;
  in.start = kBase + 801;
  in.end = kBase + 1802;
  in.correlation_id = 91;
  const uint32_t kind = 6, thread = 7;
  v1::Overhead encoded;
  EncodeOverhead(in, kind, thread, kBase, &encoded);
  OverheadRow out;
  ASSERT_TRUE(DecodeOverhead(encoded, chunk_, &out).ok());

  EXPECT_EQ(out.start, in.start);
  EXPECT_EQ(out.end, in.end);
  EXPECT_EQ(out.kind, kind);
  EXPECT_EQ(out.thread, thread);
  EXPECT_EQ(out.correlation_id, in.correlation_id);
}

TEST_F(RecordCodecTest, RequestAndBatchScopesRoundTrip) {
  const uint64_t members[] = {11, 12, 13};
  RequestScopeActivity in;
  in.start = kBase + 500;
  in.end = kBase + 9500;
  in.id = 0xfedcba9876543210ull;
  in.batch = true;
  in.batch_requests = members;
  in.batch_count = 3;
  v1::RequestScope encoded;
  EncodeRequestScope(in, /*thread=*/4, /*route=*/5, kBase, &encoded);
  RequestScopeRow out;
  ASSERT_TRUE(DecodeRequestScope(encoded, chunk_, &out).ok());
  EXPECT_EQ(out.start, in.start);
  EXPECT_EQ(out.end, in.end);
  EXPECT_EQ(out.id, in.id);
  EXPECT_TRUE(out.batch);
  EXPECT_EQ(out.thread, 4u);
  EXPECT_EQ(out.route, 5u);
  EXPECT_EQ(out.batch_requests, (std::vector<uint64_t>{11, 12, 13}));
}

TEST_F(RecordCodecTest, ARequestScopeNamingUndefinedThingsOrTooManyRequestsIsDamage) {
  RequestScopeActivity in;
  in.start = kBase;
  in.end = kBase + 1;
  v1::RequestScope encoded;
  RequestScopeRow out;
  EncodeRequestScope(in, /*thread=*/kDefined + 1, /*route=*/0, kBase, &encoded);
  EXPECT_FALSE(DecodeRequestScope(encoded, chunk_, &out).ok());
  EncodeRequestScope(in, /*thread=*/1, /*route=*/kDefined + 1, kBase, &encoded);
  EXPECT_FALSE(DecodeRequestScope(encoded, chunk_, &out).ok());
  EncodeRequestScope(in, /*thread=*/1, /*route=*/0, kBase, &encoded);
  for (size_t i = 0; i <= kMaxBatchRequests; ++i) encoded.add_batch_requests(i);
  EXPECT_FALSE(DecodeRequestScope(encoded, chunk_, &out).ok());
}

TEST_F(RecordCodecTest, KernelMetricsRoundTrip) {
  MetricRow in;
  in.correlation_id = 101;
  in.device = 33;
  in.pass_count = 102;
  in.replay_mode = v1::REPLAY_MODE_APPLICATION;
  in.kernel_name = 7;
  in.grid = {103, 104, 105};
  in.block = {106, 107, 108};
  in.values = {{3, 109.5}, {8, -110.25}};
  v1::KernelMetrics encoded;
  EncodeKernelMetrics(in, &encoded);
  MetricRow out;
  ASSERT_TRUE(DecodeKernelMetrics(encoded, chunk_, &out).ok());

  EXPECT_EQ(out.correlation_id, in.correlation_id);
  EXPECT_EQ(out.device, in.device);
  EXPECT_EQ(out.pass_count, in.pass_count);
  EXPECT_EQ(out.replay_mode, in.replay_mode);
  EXPECT_EQ(out.kernel_name, in.kernel_name);
  EXPECT_EQ(out.grid, in.grid);
  EXPECT_EQ(out.block, in.block);
  EXPECT_EQ(out.values, in.values);
}

TEST_F(RecordCodecTest, CounterSeriesRoundTrips) {
  // Out of time order on purpose: the start deltas must survive going negative.
  const std::vector<CounterPoint> in = {{kBase + 901, kBase + 1001, 12.5}, {kBase + 850, kBase + 850, -3.75}};
  const uint32_t device = 44, name = 8;
  v1::CounterSeries encoded;
  EncodeCounterSeries(device, v1::COUNTER_SOURCE_PM_SAMPLING, name, in, kBase, &encoded);
  std::vector<CounterSample> out;
  ASSERT_TRUE(DecodeCounterSeries(encoded, chunk_, &out).ok());

  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].start, in[i].start) << i;
    EXPECT_EQ(out[i].end, in[i].end) << i;
    EXPECT_EQ(out[i].device, device) << i;
    EXPECT_EQ(out[i].source, v1::COUNTER_SOURCE_PM_SAMPLING) << i;
    EXPECT_EQ(out[i].name, name) << i;
    EXPECT_DOUBLE_EQ(out[i].value, in[i].value) << i;
  }
}

TEST_F(RecordCodecTest, InstantaneousCounterSeriesStoresNoDurations) {
  const std::vector<CounterPoint> in = {{kBase + 10, kBase + 10, 1.0}, {kBase + 20, kBase + 20, 2.0}};
  v1::CounterSeries encoded;
  EncodeCounterSeries(1, v1::COUNTER_SOURCE_NVML, 1, in, kBase, &encoded);
  EXPECT_TRUE(encoded.duration().empty());
  std::vector<CounterSample> out;
  ASSERT_TRUE(DecodeCounterSeries(encoded, chunk_, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].start, kBase + 20);
  EXPECT_EQ(out[1].end, kBase + 20);
}

TEST_F(RecordCodecTest, TopDownSelectionRoundTrips) {
  HotKernelChoice in;
  in.device = 11;
  in.shape.grid = {121, 122, 123};
  in.shape.block = {124, 125, 126};
  in.total_ns = 127'000'000'000;
  in.launches = 128;
  const uint32_t name = 3;
  v1::TopDownSelection encoded;
  EncodeTopDownSelection(kBase + 129, 130, &encoded);
  EncodeHotKernel(in, name, encoded.add_kernels());
  ASSERT_TRUE(CheckTopDownSelection(encoded, chunk_).ok());

  EXPECT_EQ(encoded.time_ns(), kBase + 129);
  EXPECT_EQ(encoded.window_kernel_ns(), 130u);
  ASSERT_EQ(encoded.kernels_size(), 1);
  const v1::HotKernel& out = encoded.kernels(0);
  EXPECT_EQ(out.name(), name);
  EXPECT_EQ(out.device(), in.device);
  EXPECT_EQ(out.grid_x(), in.shape.grid[0]);
  EXPECT_EQ(out.grid_y(), in.shape.grid[1]);
  EXPECT_EQ(out.grid_z(), in.shape.grid[2]);
  EXPECT_EQ(out.block_x(), in.shape.block[0]);
  EXPECT_EQ(out.block_y(), in.shape.block[1]);
  EXPECT_EQ(out.block_z(), in.shape.block[2]);
  EXPECT_EQ(out.total_ns(), in.total_ns);
  EXPECT_EQ(out.launches(), in.launches);
}

}  // namespace
}  // namespace cuscope::core
