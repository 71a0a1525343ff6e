// Writes the synthetic part of the fuzzers' seed corpus: small traces with every record kind,
// cut at the interesting places, and one damaged in the middle.
//
//   fuzz_make_seed_corpus OUT_DIR [REAL_TRACE]
//
// With REAL_TRACE it also writes cut copies of that trace.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace_format.h"
#include "lib/core/trace_reader.h"

namespace cuscope::fuzz {
namespace {

std::string ApiName(v1::ApiDomain domain, uint32_t cbid) {
  return absl::StrCat(domain == v1::API_DOMAIN_DRIVER ? "cuLaunchKernel" : "cudaLaunchKernel", cbid);
}

core::KernelActivity Kernel(uint64_t start, uint64_t dur, uint64_t corr, const char* name, uint32_t stream) {
  core::KernelActivity k;
  k.start = start;
  k.end = start + dur;
  k.correlation_id = corr;
  k.stream = stream;
  k.config.name = name;
  k.config.grid_x = 132;
  k.config.block_x = 256;
  k.config.registers_per_thread = 32;
  k.config.dynamic_shared_memory = 4096;
  return k;
}

core::ApiActivity Api(uint64_t start, uint64_t dur, uint64_t corr, uint32_t cbid, uint64_t tid) {
  core::ApiActivity a;
  a.start = start;
  a.end = start + dur;
  a.domain = cbid % 2 ? v1::API_DOMAIN_RUNTIME : v1::API_DOMAIN_DRIVER;
  a.callback_id = cbid;
  a.pid = 4242;
  a.tid = tid;
  a.correlation_id = corr;
  return a;
}

// A header and `chunks` chunks holding every record kind; the last chunk carries the stats.
std::string AllKinds(int chunks) {
  std::string out(core::kTraceMagic);
  v1::Block block;
  v1::Header* h = block.mutable_header();
  h->set_format_version(core::kFormatVersion);
  h->mutable_session()->set_pid(4242);
  h->mutable_session()->set_host("fuzz");
  v1::Device* d = h->add_devices();
  d->set_name("NVIDIA H200");
  d->set_sm_count(132);
  d->set_peak_dram_bytes_per_second(4800000000000ull);
  h->mutable_config()->add_activity_kinds("kernel");
  h->mutable_config()->set_flush_period_ms(500);
  core::AppendFramedBlock(block, &out);

  core::ChunkBuilder b(ApiName);
  uint64_t t = 1'000'000, corr = 1;
  for (int c = 0; c < chunks; ++c) {
    b.AddWindow(v1::WINDOW_KIND_TIMELINE, t, t + 100'000, c == 0 ? "start" : "");
    for (int i = 0; i < 6; ++i, ++corr) {
      b.Add(Api(t, 3'000, corr, 211 + (i % 3), 7 + (i % 2)));
      b.Add(Kernel(t + 4'000, 2'000 + 500 * i, corr, i % 2 ? "_Z7stencilPfi" : "_Z4gemmPKfS0_Pf", 7 + (i % 2)));
      t += 10'000;
    }
    core::MemcpyRecord m;
    m.start = t;
    m.end = t + 8'000;
    m.copy_kind = v1::COPY_KIND_HTOD;
    m.src_kind = v1::MEMORY_KIND_PAGEABLE;
    m.dst_kind = v1::MEMORY_KIND_DEVICE;
    m.bytes = 1 << 20;
    m.stream = 7;
    m.correlation_id = corr++;
    b.Add(m);
    core::MemsetRecord ms;
    ms.start = t + 9'000;
    ms.end = t + 9'500;
    ms.bytes = 4096;
    ms.stream = 8;
    ms.correlation_id = corr++;
    b.Add(ms);
    core::SyncRecord s;
    s.start = t + 10'000;
    s.end = t + 30'000;
    s.type = v1::SYNC_TYPE_CONTEXT_SYNCHRONIZE;
    s.correlation_id = corr++;
    b.Add(s);
    core::NvtxActivity n;
    n.time = t;
    n.kind = v1::NVTX_KIND_RANGE_START;
    n.id = c + 1;
    n.pid = 4242;
    n.tid = 7;
    n.name = "step";
    b.Add(n);
    n.time = t + 30'000;
    n.kind = v1::NVTX_KIND_RANGE_END;
    b.Add(n);
    core::MemoryOpRecord op;
    op.time = t + 1'000;
    op.type = v1::MEMORY_OPERATION_ALLOCATION;
    op.memory_kind = v1::MEMORY_KIND_DEVICE;
    op.bytes = 1 << 20;
    op.address = 0x7f0000000000ull;
    b.Add(op);
    core::OverheadActivity o;
    o.start = t + 31'000;
    o.end = t + 32'000;
    o.kind = "buffer flush";
    o.pid = 4242;
    o.tid = 9;
    b.Add(o);
    b.AddKernelMetrics(corr - 4, 0, "_Z4gemmPKfS0_Pf", 2, v1::REPLAY_MODE_KERNEL,
                       {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 71.5}});
    // Call stacks (--stacks): frames and a stack interned, two launches naming it, a graph node
    // created with it, its clone, and a kernel the clone ran; a launch with Python frames.
    const uint32_t runtime_frame = b.InternFrame("/usr/local/cuda/lib64/libcudart.so.13", 0x4a10, "cudaLaunchKernel", 16);
    const uint32_t app_frame = b.InternFrame("/opt/app/trainer", 0x1234 + c, "_ZN5model5trainEv", 0x34);
    const uint32_t stack = b.InternStack({runtime_frame, app_frame});
    b.AddLaunchStack(corr - 1, stack);
    b.AddLaunchStack(corr - 2, stack);
    // A launch from Python: the runtime's frame, then the program's Python frames.
    const uint32_t forward = b.InternPythonFrame("/home/u/train.py", "Model.forward", 12);
    const uint32_t module = b.InternPythonFrame("/home/u/train.py", "<module>", 30);
    b.AddLaunchStack(corr - 3, b.InternStack({runtime_frame, forward, module}));
    b.AddGraphNode(9000 + c, stack, 0, t + 1'000, 4242, 211);
    b.AddGraphNode(9100 + c, 0, 9000 + c);
    core::KernelActivity graph_kernel = Kernel(t + 33'000, 1'000, 0, "_Z7stencilPfi", 7);
    graph_kernel.graph_id = 1;
    graph_kernel.graph_node_id = 9100 + c;
    b.Add(graph_kernel);
    // GPU counters over time (PM sampling and NVML), the top-down's choice, and a monitor interval
    // (monitor mode's figures), each with the strings it names.
    b.AddCounterSeries(0, v1::COUNTER_SOURCE_PM_SAMPLING, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
                       {{t, t + 10'000, 71.5}, {t + 10'000, t + 20'000, 64.0}});
    b.AddCounterSeries(0, v1::COUNTER_SOURCE_NVML, "nvml.power_w", {{t + 5'000, t + 5'000, 310}});
    core::HotKernelChoice hot;
    hot.name = "_Z4gemmPKfS0_Pf";
    hot.shape.grid = {128, 1, 1};
    hot.shape.block = {256, 1, 1};
    hot.total_ns = 9'000;
    hot.launches = 3;
    b.AddTopDownSelection(t + 35'000, 12'000, {hot});
    v1::MonitorInterval* interval = b.AddMonitorInterval();
    interval->set_start_ns(t);
    interval->set_end_ns(t + 40'000);
    interval->set_launch_calls(3);
    interval->set_sync_calls(1);
    interval->set_sync_wait_ns(2'000);
    v1::MonitorDevice* device = interval->add_devices();
    device->set_device(0);
    device->set_busy_ns(30'000);
    device->set_idle_ns(10'000);
    device->add_idle_by_cause_ns(10'000);
    device->set_kernels(3);
    device->set_kernel_gpu_ns(12'000);
    v1::MonitorKernel* top = device->add_top_kernels();
    top->set_name(b.InternString("_Z4gemmPKfS0_Pf"));
    top->set_grid_x(128);
    top->set_block_x(256);
    top->set_launches(3);
    top->set_gpu_ns(12'000);
    v1::MonitorCopy* copy = device->add_copies();
    copy->set_kind(v1::COPY_KIND_HTOD);
    copy->set_count(1);
    copy->set_bytes(1 << 20);
    copy->set_gpu_ns(1'000);
    v1::MonitorCounter* counter = device->add_counters();
    counter->set_name(b.InternString("nvml.power_w"));
    counter->set_source(v1::COUNTER_SOURCE_NVML);
    counter->set_samples(1);
    counter->set_mean(310);
    counter->set_max(310);
    t += 40'000;
    v1::Block cb;
    b.TakeChunk(cb.mutable_chunk());
    if (c == chunks - 1) {
      v1::CaptureStats* st = cb.mutable_chunk()->mutable_stats();
      st->set_buffers_requested(chunks);
      st->set_buffers_completed(chunks);
      st->set_records_written(17 * chunks);
      st->set_chunks_written(chunks);
    }
    core::AppendFramedBlock(cb, &out);
  }
  return out;
}

// Where each block ends, magic and header included.
std::vector<size_t> BlockEnds(const std::string& trace) {
  std::vector<size_t> ends;
  auto r = core::TraceReader::FromBytes(trace);
  if (!r.ok()) return ends;
  ends.push_back((*r)->bytes_read());
  core::DecodedChunk c;
  while (true) {
    auto more = (*r)->Next(&c);
    if (!more.ok() || !*more) break;
    ends.push_back((*r)->bytes_read());
  }
  return ends;
}

bool Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream f(dir + "/" + name, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

}  // namespace
}  // namespace cuscope::fuzz

int main(int argc, char** argv) {
  using namespace cuscope::fuzz;
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR [REAL_TRACE]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = true;
  const std::string three = AllKinds(3);
  const std::vector<size_t> ends = BlockEnds(three);
  if (ends.size() != 4) {
    std::fprintf(stderr, "the synthetic trace does not read back\n");
    return 1;
  }
  ok &= Write(dir, "synthetic_all_kinds", three);
  ok &= Write(dir, "synthetic_one_chunk", AllKinds(1));
  ok &= Write(dir, "synthetic_header_only", three.substr(0, ends[0]));
  ok &= Write(dir, "synthetic_cut_in_length_prefix", three.substr(0, ends[1] + 1));
  ok &= Write(dir, "synthetic_cut_in_chunk", three.substr(0, (ends[1] + ends[2]) / 2));
  ok &= Write(dir, "synthetic_cut_in_header", three.substr(0, ends[0] / 2));
  std::string damaged = three;
  damaged[ends[1] + 3] = '\xff';  // inside the second chunk's payload
  damaged[ends[1] + 4] = '\xff';
  ok &= Write(dir, "synthetic_damaged_middle", damaged);
  if (argc == 3) {
    std::ifstream f(argv[2], std::ios::binary);
    const std::string real((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::vector<size_t> real_ends = BlockEnds(real);
    if (real_ends.size() < 3) {
      std::fprintf(stderr, "%s does not read as a trace with chunks\n", argv[2]);
      return 1;
    }
    ok &= Write(dir, "real_h200", real);
    ok &= Write(dir, "real_h200_cut_in_first_chunk", real.substr(0, (real_ends[0] + real_ends[1]) / 2));
    ok &= Write(dir, "real_h200_cut_in_second_chunk", real.substr(0, (real_ends[1] + real_ends[2]) / 2));
    ok &= Write(dir, "real_h200_cut_one_byte_short", real.substr(0, real.size() - 1));
  }
  if (!ok) {
    std::fprintf(stderr, "cannot write to %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
