// The reader's checks of the values the analyzer and the exporters rely on (trace_reader.h): a
// chunk that breaks one is reported as damage naming the field, the chunks before it kept; a
// header that breaks one is refused; values at the bounds load.
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/core/trace.h"
#include "lib/core/trace_format.h"
#include "lib/core/trace_reader.h"

namespace cuscope::core {
namespace {

std::string WithHeader(const std::function<void(v1::Header*)>& fill = nullptr) {
  std::string out(kTraceMagic);
  v1::Block block;
  block.mutable_header()->set_format_version(kFormatVersion);
  if (fill) fill(block.mutable_header());
  AppendFramedBlock(block, &out);
  return out;
}

void Append(const v1::Chunk& chunk, std::string* out) {
  v1::Block block;
  *block.mutable_chunk() = chunk;
  AppendFramedBlock(block, out);
}

// A clean chunk (one copy on device 0), then `bad` as the second chunk.
Trace LoadWithSecondChunk(const v1::Chunk& bad) {
  std::string bytes = WithHeader();
  v1::Chunk good;
  good.set_base_time_ns(1000);
  good.add_memcpys()->set_duration(10);
  Append(good, &bytes);
  v1::Chunk second = bad;
  second.set_sequence(1);
  Append(second, &bytes);
  auto t = LoadTraceFromBytes(bytes);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Trace();
}

// The second chunk is damage naming `what`; the first is kept.
void ExpectDamage(const v1::Chunk& bad, const std::string& what) {
  const Trace t = LoadWithSecondChunk(bad);
  EXPECT_EQ(t.chunks, 1u);
  EXPECT_EQ(t.memcpys.size(), 1u);
  ASSERT_TRUE(t.corruption.has_value()) << what;
  EXPECT_TRUE(absl::IsDataLoss(*t.corruption));
  EXPECT_TRUE(absl::StrContains(t.corruption->message(), what)) << t.corruption->message();
}

void ExpectClean(const v1::Chunk& chunk) {
  const Trace t = LoadWithSecondChunk(chunk);
  EXPECT_EQ(t.chunks, 2u);
  EXPECT_FALSE(t.corruption.has_value()) << t.corruption->message();
}

v1::Chunk CopyOn(uint32_t device) {
  v1::Chunk c;
  c.add_memcpys()->set_device(device);
  return c;
}

v1::Chunk KernelWith(const std::function<void(v1::KernelSignature*)>& edit) {
  v1::Chunk c;
  v1::InternedString* name = c.add_strings();
  name->set_id(1);
  name->set_value("k");
  v1::KernelSignature* s = c.add_kernel_signatures();
  s->set_id(1);
  s->set_name(1);
  s->set_grid_x(1);
  s->set_block_x(128);
  s->set_registers_per_thread(32);
  edit(s);
  v1::KernelColumns* k = c.mutable_kernels();
  k->add_start_delta(0);
  k->add_duration(10);
  k->add_signature(1);
  k->add_stream(7);
  k->add_correlation_delta(1);
  return c;
}

TEST(TraceValidationTest, CopyOnADeviceIdPastTheBoundIsDamageNamingTheDevice) {
  ExpectClean(CopyOn(kMaxDevices - 1));
  ExpectDamage(CopyOn(kMaxDevices), "copy row names device 64 (device ids are below 64)");
  // The value the analyzer once used as "no device yet".
  ExpectDamage(CopyOn(0xffffffffu), "copy row names device 4294967295");
}

TEST(TraceValidationTest, EveryRowThatNamesADeviceIsChecked) {
  v1::Chunk memset;
  memset.add_memsets()->set_device(256);
  ExpectDamage(memset, "memset row names device 256");

  ExpectDamage(KernelWith([](v1::KernelSignature* s) { s->set_device(kMaxDevices); }),
               "kernel signature 1 names device 64");
  ExpectClean(KernelWith([](v1::KernelSignature* s) { s->set_device(kMaxDevices - 1); }));

  v1::Chunk metric;
  metric.add_kernel_metrics()->set_device(1000);
  ExpectDamage(metric, "metric row names device 1000");

  v1::Chunk counter;
  v1::CounterSeries* series = counter.add_counter_series();
  series->set_device(70);
  series->add_start_delta(0);
  series->add_value(1);
  ExpectDamage(counter, "counter series names device 70");

  v1::Chunk top_down;
  top_down.mutable_top_down()->add_kernels()->set_device(99);
  ExpectDamage(top_down, "top-down selection names device 99");

  // Memory-allocation rows are not checked: only `cuscope dump` reads their device.
  v1::Chunk allocation;
  allocation.add_memory_operations()->set_device(0xffffffffu);
  ExpectClean(allocation);
}

TEST(TraceValidationTest, RegistersPerThreadPastCuptisFieldAreDamage) {
  ExpectClean(KernelWith([](v1::KernelSignature* s) { s->set_registers_per_thread(kMaxRegistersPerThreadField); }));
  ExpectDamage(KernelWith([](v1::KernelSignature* s) { s->set_registers_per_thread(0xffffffffu); }),
               "kernel signature 1 has 4294967295 registers per thread");
}

TEST(TraceValidationTest, NegativeSharedMemoryOrDimensionsAreDamage) {
  ExpectDamage(KernelWith([](v1::KernelSignature* s) { s->set_dynamic_shared_memory(-1); }), "negative shared memory");
  ExpectDamage(KernelWith([](v1::KernelSignature* s) { s->set_static_shared_memory(INT32_MIN); }),
               "negative shared memory");
  ExpectDamage(KernelWith([](v1::KernelSignature* s) { s->set_grid_y(-5); }), "negative grid or block dimension");
  ExpectDamage(KernelWith([](v1::KernelSignature* s) { s->set_block_z(-1); }), "negative grid or block dimension");
}

TEST(TraceValidationTest, HeaderWithTooManyOrOutOfRangeDevicesIsRefused) {
  auto all = LoadTraceFromBytes(WithHeader([](v1::Header* h) {
    for (uint32_t i = 0; i < kMaxDevices; ++i) h->add_devices()->set_id(i);
  }));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->header.devices_size(), 64);

  auto too_many = LoadTraceFromBytes(WithHeader([](v1::Header* h) {
    for (uint32_t i = 0; i <= kMaxDevices; ++i) h->add_devices()->set_id(i % kMaxDevices);
  }));
  ASSERT_FALSE(too_many.ok());
  EXPECT_TRUE(absl::IsDataLoss(too_many.status()));
  EXPECT_EQ(too_many.status().message(), "corrupt trace: the header declares 65 devices (at most 64)");

  auto far = LoadTraceFromBytes(WithHeader([](v1::Header* h) { h->add_devices()->set_id(300); }));
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.status().message(), "corrupt trace: the header names device 300 (device ids are below 64)");
}

}  // namespace
}  // namespace cuscope::core
