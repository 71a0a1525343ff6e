// Writes the hand-made inputs of tests/fuzz/regressions/ that reproduce bugs found by review: each
// is the smallest trace that showed its bug before the fix.
//
//   fuzz_make_regressions OUT_DIR
//
// The files are checked in; this program says how each was made, and remakes them.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include <vector>

#include "lib/core/chunk_builder.h"
#include "lib/core/trace_format.h"

namespace cuscope::fuzz {
namespace {

// The magic and a header block; `devices` H200-like devices with ids 0, 1, ...
std::string Header(int devices) {
  std::string out(core::kTraceMagic);
  v1::Block block;
  v1::Header* h = block.mutable_header();
  h->set_format_version(core::kFormatVersion);
  for (int i = 0; i < devices; ++i) {
    v1::Device* d = h->add_devices();
    d->set_id(static_cast<uint32_t>(i));
    d->set_name("NVIDIA H200");
    d->set_compute_capability_major(9);
    d->set_sm_count(132);
    d->set_max_warps_per_sm(64);
    d->set_max_threads_per_sm(2048);
    d->set_max_blocks_per_sm(32);
    d->set_max_threads_per_block(1024);
    d->set_registers_per_sm(65536);
    d->set_max_registers_per_block(65536);
    d->set_shared_memory_per_sm(233472);
    d->set_max_shared_memory_per_block(232448);
    d->set_warp_size(32);
    d->set_reserved_shared_memory_per_block(1024);
  }
  core::AppendFramedBlock(block, &out);
  return out;
}

void AppendChunk(const v1::Chunk& chunk, std::string* out) {
  v1::Block block;
  *block.mutable_chunk() = chunk;
  core::AppendFramedBlock(block, out);
}

void AddCopy(v1::Chunk* c, uint32_t device, uint32_t stream, int64_t start) {
  v1::Memcpy* m = c->add_memcpys();
  m->set_start(start);
  m->set_duration(100);
  m->set_copy_kind(v1::COPY_KIND_HTOD);
  m->set_bytes(4096);
  m->set_device(device);
  m->set_stream(stream);
}

// One copy on device 0xffffffff: the analyzer's "no device yet" value, so its per-device list was
// never looked up and it wrote through a null pointer.
std::string CopyOnDeviceFfffffff() {
  std::string out = Header(0);
  v1::Chunk c;
  c.set_base_time_ns(1'000'000);
  AddCopy(&c, 0xffffffffu, 7, 0);
  AppendChunk(c, &out);
  return out;
}

// A profiled kernel whose signature claims `registers` registers per thread.
std::string ProfiledKernelWithRegisters(uint32_t registers) {
  std::string out = Header(1);
  v1::Chunk c;
  c.set_base_time_ns(1'000'000);
  v1::InternedString* name = c.add_strings();
  name->set_id(1);
  name->set_value("_Z4gemmPKfS0_Pf");
  v1::InternedString* metric = c.add_strings();
  metric->set_id(2);
  metric->set_value("gpu__time_duration.sum");
  v1::InternedString* sm = c.add_strings();
  sm->set_id(3);
  sm->set_value("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  v1::KernelSignature* s = c.add_kernel_signatures();
  s->set_id(1);
  s->set_name(1);
  s->set_grid_x(132);
  s->set_grid_y(1);
  s->set_grid_z(1);
  s->set_block_x(128);
  s->set_block_y(1);
  s->set_block_z(1);
  s->set_registers_per_thread(registers);
  v1::KernelColumns* k = c.mutable_kernels();
  k->add_start_delta(0);
  k->add_duration(5000);
  k->add_signature(1);
  k->add_stream(7);
  k->add_correlation_delta(1);
  v1::KernelMetrics* m = c.add_kernel_metrics();
  m->set_correlation_id(1);
  m->set_kernel_name(1);
  v1::MetricValue* v = m->add_values();
  v->set_name(2);
  v->set_value(5000);
  v1::MetricValue* w = m->add_values();
  w->set_name(3);
  w->set_value(12.5);
  AppendChunk(c, &out);
  return out;
}

// `first` chunks' worth of devices with copies: devices 0..63 in the first chunk, then one copy on
// `next` in a second chunk. Device 256 shares its low 8 bits with device 0: the Perfetto export
// declared one stream track twice.
std::string DevicesThen(uint32_t count, uint32_t next) {
  std::string out = Header(0);
  v1::Chunk c;
  c.set_base_time_ns(1'000'000);
  for (uint32_t d = 0; d < count; ++d) AddCopy(&c, d, 7, static_cast<int64_t>(d) * 200);
  AppendChunk(c, &out);
  v1::Chunk c2;
  c2.set_sequence(1);
  c2.set_base_time_ns(2'000'000);
  AddCopy(&c2, next, 7, 0);
  AppendChunk(c2, &out);
  return out;
}

// One copy on each of `count` distinct devices, in one chunk: the analyzer kept a list per device
// and walked every device per device; the export wrote a utilization counter per device.
std::string ManyDevices(uint32_t count) {
  std::string out = Header(0);
  v1::Chunk c;
  c.set_base_time_ns(1'000'000);
  for (uint32_t d = 0; d < count; ++d) AddCopy(&c, d, 7, static_cast<int64_t>(d) * 200);
  AppendChunk(c, &out);
  return out;
}

// A header declaring `count` devices, each with only its id.
std::string HeaderWithDevices(uint32_t count) {
  std::string out(core::kTraceMagic);
  v1::Block block;
  v1::Header* h = block.mutable_header();
  h->set_format_version(core::kFormatVersion);
  for (uint32_t i = 0; i < count; ++i) h->add_devices()->set_id(i);
  core::AppendFramedBlock(block, &out);
  return out;
}

// `launches` kernels, each a few bytes in the file, all naming one kernel of `name_bytes` bytes and,
// with `frames`, one call stack of that many frames whose functions have names of 1,000 bytes.
// Exported to Chrome JSON (no interning) or dumped, every record spelled the name and the stack
// out in full: a 197 KB trace became 2.4 GB of JSON, a 31 KB one 601 MB of dump.
std::string RecordsNamingOneLongNameAndStack(size_t name_bytes, int launches, int frames) {
  core::ChunkBuilder b([](v1::ApiDomain, uint32_t) { return std::string("cudaLaunchKernel_v7000"); });
  uint32_t stack = 0;
  if (frames > 0) {
    std::vector<uint32_t> ids;
    for (int f = 0; f < frames; ++f) {
      ids.push_back(b.InternFrame("/opt/app/server", 0x1000 + 16 * static_cast<uint64_t>(f),
                                  "_ZN5model" + std::string(1000, 'f') + std::to_string(f) + "Ev", 0));
    }
    stack = b.InternStack(ids);
  }
  const std::string name = "_Z" + std::string(name_bytes, 'k') + "v";  // the record keeps a view of it
  for (int i = 0; i < launches; ++i) {
    core::KernelActivity k;
    k.start = 1'000'000 + 10 * static_cast<uint64_t>(i);
    k.end = k.start + 5;
    k.correlation_id = 1 + static_cast<uint64_t>(i);
    k.stream = 7;
    k.config.name = name;
    b.Add(k);
    if (stack != 0) b.AddLaunchStack(k.correlation_id, stack);
  }
  std::string out = Header(1);
  v1::Chunk c;
  b.TakeChunk(&c);
  AppendChunk(c, &out);
  return out;
}

bool Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream f(dir + "/" + name, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) return false;
  std::printf("%s: %zu bytes\n", name.c_str(), bytes.size());
  return true;
}

}  // namespace
}  // namespace cuscope::fuzz

int main(int argc, char** argv) {
  using namespace cuscope::fuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok = Write(dir, "copy_on_device_ffffffff", CopyOnDeviceFfffffff()) &&
                  Write(dir, "registers_per_thread_at_uint32_max", ProfiledKernelWithRegisters(0xffffffffu)) &&
                  Write(dir, "registers_per_thread_at_the_field_limit", ProfiledKernelWithRegisters(0xffffu)) &&
                  Write(dir, "sixty_four_devices_then_device_256", DevicesThen(64, 256)) &&
                  Write(dir, "two_thousand_devices", ManyDevices(2000)) &&
                  Write(dir, "header_declaring_a_thousand_devices", HeaderWithDevices(1000)) &&
                  Write(dir, "kernels_naming_one_long_name", RecordsNamingOneLongNameAndStack(20'000, 5'000, 0)) &&
                  Write(dir, "launches_naming_one_deep_stack", RecordsNamingOneLongNameAndStack(100, 5'000, 64));
  return ok ? 0 : 1;
}
