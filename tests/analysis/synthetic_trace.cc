#include "tests/analysis/synthetic_trace.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/core/trace_writer.h"

namespace cuscope::testing {

std::string TempTracePath() {
  static std::atomic<int> counter{0};
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/cuscope_analysis_test_", getpid(), "_", counter++, ".cuscope");
}

SyntheticTrace::SyntheticTrace() {
  builder_ = std::make_unique<core::ChunkBuilder>([this](v1::ApiDomain, uint32_t callback_id) {
    auto it = name_of_.find(callback_id);
    return it == name_of_.end() ? std::string("unknown") : it->second;
  });
}

uint64_t SyntheticTrace::Api(const std::string& name, double start_us, double duration_us, uint64_t tid) {
  auto [it, inserted] = callback_of_.try_emplace(name, static_cast<uint32_t>(callback_of_.size() + 1));
  if (inserted) name_of_[it->second] = name;
  core::ApiActivity a;
  a.start = Us(start_us);
  a.end = Us(start_us + duration_us);
  a.domain = name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0 ? v1::API_DOMAIN_DRIVER : v1::API_DOMAIN_RUNTIME;
  a.callback_id = it->second;
  a.pid = 42;
  a.tid = tid;
  a.correlation_id = next_correlation_++;
  builder_->Add(a);
  return a.correlation_id;
}

void SyntheticTrace::Kernel(const std::string& name, double start_us, double duration_us, uint32_t stream,
                            uint64_t correlation, uint32_t graph_id, uint32_t flags, uint32_t device, int grid_x,
                            int block_x) {
  core::KernelActivity k;
  k.start = Us(start_us);
  k.end = Us(start_us + duration_us);
  k.correlation_id = correlation;
  k.stream = stream;
  k.graph_id = graph_id;
  k.flags = flags;
  k.config.name = name;
  k.config.device = device;
  k.config.grid_x = grid_x;
  k.config.block_x = block_x;
  builder_->Add(k);
}

void SyntheticTrace::Launch(const std::string& kernel, double api_start_us, double api_duration_us,
                            double kernel_start_us, double kernel_duration_us, uint32_t stream, uint64_t tid,
                            uint32_t graph_id) {
  const uint64_t corr =
      Api(graph_id ? "cudaGraphLaunch_v10000" : "cudaLaunchKernel_v7000", api_start_us, api_duration_us, tid);
  Kernel(kernel, kernel_start_us, kernel_duration_us, stream, corr, graph_id);
}

void SyntheticTrace::Memcpy(v1::CopyKind kind, double start_us, double duration_us, uint64_t bytes, bool async,
                            v1::MemoryKind host_kind, uint32_t stream, uint64_t correlation) {
  core::MemcpyRecord m;
  m.start = Us(start_us);
  m.end = Us(start_us + duration_us);
  m.copy_kind = kind;
  m.src_kind = kind == v1::COPY_KIND_HTOD ? host_kind : v1::MEMORY_KIND_DEVICE;
  m.dst_kind = kind == v1::COPY_KIND_DTOH ? host_kind : v1::MEMORY_KIND_DEVICE;
  m.bytes = bytes;
  m.stream = stream;
  m.correlation_id = correlation;
  m.async = async;
  builder_->Add(m);
}

void SyntheticTrace::Memset(double start_us, double duration_us, uint64_t bytes, bool async, uint32_t stream,
                            uint64_t correlation) {
  core::MemsetRecord m;
  m.start = Us(start_us);
  m.end = Us(start_us + duration_us);
  m.bytes = bytes;
  m.memory_kind = v1::MEMORY_KIND_DEVICE;
  m.stream = stream;
  m.correlation_id = correlation;
  m.async = async;
  builder_->Add(m);
}

void SyntheticTrace::StreamWaitEvent(uint32_t stream, double start_us, double duration_us) {
  core::SyncRecord s;
  s.start = Us(start_us);
  s.end = Us(start_us + duration_us);
  s.type = v1::SYNC_TYPE_STREAM_WAIT_EVENT;
  s.stream = stream;
  s.event = 1;
  builder_->Add(s);
}

void SyntheticTrace::NvtxRange(const std::string& name, double start_us, double end_us, uint64_t tid) {
  core::NvtxActivity a;
  a.kind = v1::NVTX_KIND_RANGE_START;
  a.time = Us(start_us);
  a.id = next_nvtx_;
  a.pid = 42;
  a.tid = tid;
  a.name = name;
  builder_->Add(a);
  a.kind = v1::NVTX_KIND_RANGE_END;
  a.time = Us(end_us);
  a.name = "";
  builder_->Add(a);
  ++next_nvtx_;
}

std::string SyntheticTrace::Write() {
  if (!path_.empty()) return path_;
  path_ = TempTracePath();
  auto writer = core::TraceWriter::Create(path_, /*overwrite=*/true);
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return path_;
  v1::Header header;
  header.set_format_version(1);
  header.mutable_session()->set_pid(42);
  EXPECT_TRUE((*writer)->WriteHeader(header).ok());
  v1::Chunk chunk;
  builder_->TakeChunk(&chunk);
  chunk.mutable_stats()->set_records_written(1);
  EXPECT_TRUE((*writer)->WriteChunk(chunk).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return path_;
}

core::Trace SyntheticTrace::Load() {
  auto trace = core::LoadTrace(Write());
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *std::move(trace) : core::Trace();
}

}  // namespace cuscope::testing
