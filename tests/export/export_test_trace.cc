#include "tests/export/export_test_trace.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/core/trace_format.h"

namespace cuscope::exporter::testing {

namespace {

// A folder of this process's own, made once under $TEST_TMPDIR (or /tmp). Names made from the process
// id alone were not enough: on a busy machine ids are reused, and a test that checks a derived name
// is absent (an export written beside its trace) found the file an earlier process of that id left.
const std::string& ProcessTempDir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/cuscope_export_test_XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "cannot make a temporary folder: " << pattern;
    return pattern;
  }();
  return dir;
}

}  // namespace

std::string TempPath(const std::string& suffix) {
  static std::atomic<int> counter{0};
  return absl::StrCat(ProcessTempDir(), "/cuscope_export_test_", counter++, suffix);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TestTrace::TestTrace() {
  header_.set_format_version(core::kFormatVersion);
  v1::Session* s = header_.mutable_session();
  s->set_pid(kPid);
  s->add_command_line("/usr/bin/app");
  s->add_command_line("--steps=3");
  s->set_start_time_ns(kT0);
  v1::Device* d = header_.add_devices();
  d->set_id(0);
  d->set_name("NVIDIA H200");
  builder_ = std::make_unique<core::ChunkBuilder>([this](v1::ApiDomain, uint32_t callback_id) {
    auto it = name_of_.find(callback_id);
    return it == name_of_.end() ? std::string("unknown") : it->second;
  });
}

void TestTrace::Api(const std::string& name, uint64_t start, uint64_t end, uint64_t correlation, uint64_t tid) {
  auto [it, inserted] = callback_of_.try_emplace(name, static_cast<uint32_t>(callback_of_.size() + 1));
  if (inserted) name_of_[it->second] = name;
  core::ApiActivity a;
  a.start = kT0 + start;
  a.end = kT0 + end;
  a.domain = name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0 ? v1::API_DOMAIN_DRIVER : v1::API_DOMAIN_RUNTIME;
  a.callback_id = it->second;
  a.pid = kPid;
  a.tid = tid;
  a.correlation_id = correlation;
  builder_->Add(a);
}

void TestTrace::Kernel(const char* name, uint64_t start, uint64_t end, uint32_t stream, uint64_t correlation,
                       uint32_t flags, uint32_t graph_id, int grid_x, int block_x, uint32_t registers) {
  core::KernelActivity k;
  k.start = kT0 + start;
  k.end = kT0 + end;
  k.correlation_id = correlation;
  k.stream = stream;
  k.flags = flags;
  k.graph_id = graph_id;
  k.graph_node_id = graph_id != 0 ? 1000 + start : 0;
  k.config.name = name;
  k.config.grid_x = grid_x;
  k.config.block_x = block_x;
  k.config.registers_per_thread = registers;
  k.config.static_shared_memory = 256;
  k.config.dynamic_shared_memory = 1024;
  builder_->Add(k);
}

void TestTrace::Memcpy(v1::CopyKind kind, uint64_t start, uint64_t end, uint64_t bytes, uint32_t stream,
                       uint64_t correlation) {
  core::MemcpyRecord m;
  m.start = kT0 + start;
  m.end = kT0 + end;
  m.copy_kind = kind;
  m.src_kind = kind == v1::COPY_KIND_HTOD ? v1::MEMORY_KIND_PINNED : v1::MEMORY_KIND_DEVICE;
  m.dst_kind = kind == v1::COPY_KIND_DTOH ? v1::MEMORY_KIND_PINNED : v1::MEMORY_KIND_DEVICE;
  m.bytes = bytes;
  m.stream = stream;
  m.correlation_id = correlation;
  m.async = true;
  builder_->Add(m);
}

void TestTrace::Memset(uint64_t start, uint64_t end, uint64_t bytes, uint32_t stream, uint64_t correlation) {
  core::MemsetRecord m;
  m.start = kT0 + start;
  m.end = kT0 + end;
  m.bytes = bytes;
  m.value = 7;
  m.memory_kind = v1::MEMORY_KIND_DEVICE;
  m.stream = stream;
  m.correlation_id = correlation;
  m.async = true;
  builder_->Add(m);
}

void TestTrace::Nvtx(v1::NvtxKind kind, uint64_t id, uint64_t time, const char* name, uint64_t tid) {
  core::NvtxActivity a;
  a.kind = kind;
  a.time = kT0 + time;
  a.id = id;
  a.pid = kPid;
  a.tid = tid;
  a.name = name;
  builder_->Add(a);
}

void TestTrace::Overhead(const char* kind, uint64_t start, uint64_t end, uint64_t tid) {
  core::OverheadActivity o;
  o.start = kT0 + start;
  o.end = kT0 + end;
  o.kind = kind;
  o.pid = kPid;
  o.tid = tid;
  builder_->Add(o);
}

void TestTrace::Metrics(uint64_t correlation, const char* kernel) {
  builder_->AddKernelMetrics(correlation, 0, kernel, 8, v1::REPLAY_MODE_KERNEL, {{"gpu__time_duration.sum", 1500}});
}

void TestTrace::Window(v1::WindowKind kind, std::optional<uint64_t> start, std::optional<uint64_t> end,
                       const char* reason) {
  builder_->AddWindow(kind, start ? kT0 + *start : 0, end ? kT0 + *end : 0, reason);
}

void TestTrace::MonitorInterval(const v1::MonitorInterval& interval) { *builder_->AddMonitorInterval() = interval; }

void BuildScenario(TestTrace* t) {
  t->Window(v1::WINDOW_KIND_TIMELINE, 0, std::nullopt, "session");
  t->Api("cudaLaunchKernel_v7000", 1000, 3000, 1);
  t->Api("cuLaunchKernel", 1500, 2500, 1);
  t->Kernel("_Z6kernelPf", 5000, 15000, 7, 1);
  t->Kernel("_Z2k2v", 12000, 18000, 7, 0);
  t->Api("cudaMemsetAsync_v3020", 15000, 15500, 3);
  t->Memset(16000, 18000, 4096, 8, 3);
  t->Api("cudaMemcpyAsync_v3020", 20000, 21000, 2);
  t->Memcpy(v1::COPY_KIND_HTOD, 22000, 32000, 1 << 20, 7, 2);
  t->Nvtx(v1::NVTX_KIND_RANGE_START, 1, 500, "outer");
  t->Nvtx(v1::NVTX_KIND_RANGE_START, 2, 900, "inner");
  t->Nvtx(v1::NVTX_KIND_RANGE_END, 2, 3500, "");
  t->Nvtx(v1::NVTX_KIND_MARK, 3, 4000, "checkpoint");
  t->Overhead("buffer flush", 33000, 34000);
  t->EndChunk();

  t->Nvtx(v1::NVTX_KIND_RANGE_END, 1, 40000, "");
  t->Api("cudaLaunchKernel_v7000", 45000, 60000, 4);
  t->Kernel("_Z8profiledv", 50000, 50000, 7, 4, v1::KERNEL_FLAG_REPLAYED);
  t->Metrics(4, "_Z8profiledv");
  t->Window(v1::WINDOW_KIND_METRICS, 45000, 60000, "kernel replay");
  t->Api("cudaGraphLaunch_v10000", 70000, 71000, 5);
  t->Kernel("_Z5node1v", 72000, 74000, 7, 5, 0, 9);
  t->Kernel("_Z5node2v", 74000, 76000, 7, 5, 0, 9);
  t->Window(v1::WINDOW_KIND_TIMELINE, std::nullopt, 100000, "session");
  t->Api("cudaLaunchKernel_v7000", 9'990'000, 9'995'000, 6);
  t->Kernel("_Z6kernelPf", 10'000'000, 10'001'000, 7, 6);
  t->EndChunk();
}

void TestTrace::LaunchStack(uint64_t correlation, const std::vector<std::pair<std::string, std::string>>& frames) {
  std::vector<uint32_t> ids;
  uint64_t offset = 0;
  for (const auto& [module, function] : frames) ids.push_back(builder_->InternFrame(module, offset += 0x40, function, 0));
  builder_->AddLaunchStack(correlation, builder_->InternStack(ids));
}

void TestTrace::EndChunk() {
  v1::Chunk& c = chunks_.emplace_back();
  builder_->TakeChunk(&c);
  c.mutable_stats()->set_records_written(1);
}

std::string TestTrace::Bytes() {
  if (builder_->pending_records() > 0) EndChunk();
  std::string out(core::kTraceMagic);
  v1::Block header;
  *header.mutable_header() = header_;
  core::AppendFramedBlock(header, &out);
  for (const v1::Chunk& c : chunks_) {
    v1::Block b;
    *b.mutable_chunk() = c;
    core::AppendFramedBlock(b, &out);
  }
  return out;
}

std::string TestTrace::Write(size_t keep) {
  const std::string path = TempPath(".cuscope");
  std::string bytes = Bytes();
  if (keep < bytes.size()) bytes.resize(keep);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace cuscope::exporter::testing
