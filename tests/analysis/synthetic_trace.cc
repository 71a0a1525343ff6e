#include "tests/analysis/synthetic_trace.h"

#include <cstring>

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

v1::Device H200Device(uint32_t id) {
  v1::Device d;
  d.set_id(id);
  d.set_name("NVIDIA H200");
  d.set_compute_capability_major(9);
  d.set_compute_capability_minor(0);
  d.set_sm_count(132);
  d.set_max_warps_per_sm(64);
  d.set_max_threads_per_sm(2048);
  d.set_max_blocks_per_sm(32);
  d.set_max_threads_per_block(1024);
  d.set_registers_per_sm(65536);
  d.set_max_registers_per_block(65536);
  d.set_shared_memory_per_sm(233472);         // 228 KiB
  d.set_max_shared_memory_per_block(232448);  // opt-in maximum: 227 KiB
  d.set_reserved_shared_memory_per_block(1024);
  d.set_warp_size(32);
  d.set_sm_clock_khz(1980000);
  d.set_peak_dram_bytes_per_second(4'800'000'000'000ull);
  d.set_peak_fp32_flops(60e12);
  d.set_peak_fp64_flops(30e12);
  d.set_peak_fp16_flops(120e12);
  d.set_peak_fp16_tensor_flops(960e12);
  return d;
}

core::KernelConfig Config(std::string_view name, int grid_x, int block_x, uint32_t registers,
                          int32_t dynamic_shared_memory, uint32_t device) {
  core::KernelConfig c;
  c.name = name;
  c.device = device;
  c.grid_x = grid_x;
  c.block_x = block_x;
  c.registers_per_thread = registers;
  c.dynamic_shared_memory = dynamic_shared_memory;
  return c;
}

SyntheticTrace::SyntheticTrace() {
  header_.set_format_version(1);
  header_.mutable_session()->set_pid(42);
  builder_ = std::make_unique<core::ChunkBuilder>(
      [this](v1::ApiDomain, uint32_t callback_id) { return ApiName(callback_id); });
}

uint32_t SyntheticTrace::CallbackId(const std::string& name) {
  auto [it, inserted] = callback_of_.try_emplace(name, static_cast<uint32_t>(callback_of_.size() + 1));
  if (inserted) name_of_[it->second] = name;
  return it->second;
}

std::string SyntheticTrace::ApiName(uint32_t callback_id) const {
  auto it = name_of_.find(callback_id);
  return it == name_of_.end() ? std::string("unknown") : it->second;
}

uint64_t SyntheticTrace::Api(const std::string& name, double start_us, double duration_us, uint64_t tid) {
  core::ApiActivity a;
  a.start = Us(start_us);
  a.end = Us(start_us + duration_us);
  a.domain = name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0 ? v1::API_DOMAIN_DRIVER : v1::API_DOMAIN_RUNTIME;
  a.callback_id = CallbackId(name);
  a.pid = 42;
  a.tid = tid;
  a.correlation_id = next_correlation_++;
  builder_->Add(a);
  return a.correlation_id;
}

void SyntheticTrace::RequestScope(uint64_t id, const std::string& route, double start_us, double end_us,
                                  uint64_t tid) {
  core::RequestScopeActivity r;
  r.start = Us(start_us);
  r.end = Us(end_us);
  r.pid = 42;
  r.tid = tid;
  r.id = id;
  r.route = route;
  builder_->Add(r);
}

void SyntheticTrace::BatchScope(uint64_t id, const std::vector<uint64_t>& members, double start_us, double end_us,
                                uint64_t tid) {
  core::RequestScopeActivity r;
  r.start = Us(start_us);
  r.end = Us(end_us);
  r.pid = 42;
  r.tid = tid;
  r.id = id;
  r.batch = true;
  r.batch_requests = members.data();
  r.batch_count = static_cast<uint32_t>(members.size());
  builder_->Add(r);
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

void SyntheticTrace::QueuedKernel(const std::string& name, double queued_us, double start_us, double duration_us,
                                  uint32_t stream) {
  core::KernelActivity k;
  k.start = Us(start_us);
  k.end = Us(start_us + duration_us);
  k.queued = Us(queued_us);
  k.stream = stream;
  k.config.name = name;
  k.config.block_x = 128;
  k.config.grid_x = 1;
  builder_->Add(k);
}

void SyntheticTrace::Launch(const std::string& kernel, double api_start_us, double api_duration_us,
                            double kernel_start_us, double kernel_duration_us, uint32_t stream, uint64_t tid,
                            uint32_t graph_id) {
  const uint64_t corr =
      Api(graph_id ? "cudaGraphLaunch_v10000" : "cudaLaunchKernel_v7000", api_start_us, api_duration_us, tid);
  Kernel(kernel, kernel_start_us, kernel_duration_us, stream, corr, graph_id);
}

void SyntheticTrace::KernelWith(const core::KernelConfig& config, double start_us, double duration_us,
                                uint64_t correlation, uint32_t flags, uint32_t stream) {
  core::KernelActivity k;
  k.start = Us(start_us);
  k.end = Us(start_us + duration_us);
  k.correlation_id = correlation;
  k.stream = stream;
  k.flags = flags;
  k.config = config;
  builder_->Add(k);
}

uint64_t SyntheticTrace::ProfiledLaunch(const core::KernelConfig& config, double start_us, double window_us,
                                        const MetricValues& values, uint32_t flags) {
  const uint64_t corr = Api("cudaLaunchKernel_v7000", start_us, window_us);
  KernelWith(config, start_us + window_us / 2, 0, corr, flags);
  Metrics(corr, std::string(config.name), config.device, start_us, window_us, values);
  return corr;
}

void SyntheticTrace::Metrics(uint64_t correlation, const std::string& kernel, uint32_t device,
                             double window_start_us, double window_us, const MetricValues& values) {
  builder_->AddKernelMetrics(correlation, device, kernel, metric_passes_ ? metric_passes_ : 8, v1::REPLAY_MODE_KERNEL,
                             values);
  builder_->AddWindow(v1::WINDOW_KIND_METRICS, Us(window_start_us), Us(window_start_us + window_us), "kernel replay");
}

void SyntheticTrace::MetricsAfterWindow(const core::KernelConfig& config, double window_start_us, double window_us,
                                        const MetricValues& values) {
  core::LaunchShape shape;
  shape.grid = {static_cast<uint32_t>(config.grid_x), static_cast<uint32_t>(config.grid_y),
                static_cast<uint32_t>(config.grid_z)};
  shape.block = {static_cast<uint32_t>(config.block_x), static_cast<uint32_t>(config.block_y),
                 static_cast<uint32_t>(config.block_z)};
  // The collector's correlation ids keep counting while the timeline is off: one no row has.
  builder_->AddKernelMetrics(next_correlation_++, config.device, config.name, metric_passes_ ? metric_passes_ : 9,
                             v1::REPLAY_MODE_KERNEL, values, &shape);
  builder_->AddWindow(v1::WINDOW_KIND_METRICS, Us(window_start_us), Us(window_start_us + window_us), "kernel replay");
}

void SyntheticTrace::LaunchStack(uint64_t correlation,
                                 const std::vector<std::pair<std::string, std::string>>& frames) {
  builder_->AddLaunchStack(correlation, InternStack(frames, 0x100));
}

void SyntheticTrace::GraphKernel(const std::string& name, double start_us, double duration_us, uint32_t graph_id,
                                 uint64_t node, uint64_t correlation) {
  core::KernelActivity k;
  k.start = Us(start_us);
  k.end = Us(start_us + duration_us);
  k.correlation_id = correlation;
  k.stream = 7;
  k.graph_id = graph_id;
  k.graph_node_id = node;
  k.config.name = name;
  k.config.grid_x = 1;
  k.config.block_x = 128;
  builder_->Add(k);
}

void SyntheticTrace::GraphNode(uint64_t node, const std::vector<std::pair<std::string, std::string>>& frames) {
  builder_->AddGraphNode(node, InternStack(frames, 0x800), 0);
}

uint32_t SyntheticTrace::InternStack(const std::vector<std::pair<std::string, std::string>>& frames,
                                     uint64_t first_offset) {
  std::vector<uint32_t> ids;
  uint64_t offset = first_offset;
  for (const auto& [module, function] : frames) {
    if (module.starts_with("py:")) {  // "py:FILE:LINE"
      const size_t colon = module.rfind(':');
      ids.push_back(builder_->InternPythonFrame(module.substr(3, colon - 3), function,
                                                static_cast<uint32_t>(std::stoul(module.substr(colon + 1)))));
      continue;
    }
    ids.push_back(builder_->InternFrame(module, FrameOffset(module, function, offset += 0x10), function, 4));
  }
  return builder_->InternStack(ids);
}

uint64_t SyntheticTrace::FrameOffset(const std::string& module, const std::string& function, uint64_t positional) {
  if (function.empty()) return positional;
  auto [it, inserted] = frame_offsets_.try_emplace({module, function}, 0x10000 + 0x100 * frame_offsets_.size());
  return it->second;
}

void SyntheticTrace::GraphNodeClone(uint64_t node, uint64_t original) { builder_->AddGraphNode(node, 0, original); }

void SyntheticTrace::GraphNodeAt(uint64_t node, const std::vector<std::pair<std::string, std::string>>& frames,
                                 double created_us, uint64_t tid) {
  builder_->AddGraphNode(node, InternStack(frames, 0x800), 0, Us(created_us), 42, tid);
}

void SyntheticTrace::TimelineWindow(double start_us, double end_us, const std::string& reason) {
  builder_->AddWindow(v1::WINDOW_KIND_TIMELINE, Us(start_us), Us(end_us), reason);
}

void SyntheticTrace::TimelineWindowOpens(double start_us, const std::string& reason) {
  builder_->AddWindow(v1::WINDOW_KIND_TIMELINE, Us(start_us), 0, reason);
}

void SyntheticTrace::TimelineWindowCloses(double end_us, const std::string& reason) {
  builder_->AddWindow(v1::WINDOW_KIND_TIMELINE, 0, Us(end_us), reason);
}

void SyntheticTrace::Counter(const std::string& name, v1::CounterSource source, const std::vector<Sample>& samples,
                             uint32_t device) {
  std::vector<core::ChunkBuilder::CounterPoint> points;
  for (const Sample& x : samples) points.push_back({Us(x.start_us), Us(x.start_us + x.duration_us), x.value});
  builder_->AddCounterSeries(device, source, name, points);
}

void SyntheticTrace::NvmlReadings(const std::string& name, double start_us, double period_us,
                                  const std::vector<double>& values, uint32_t device) {
  std::vector<Sample> samples;
  for (size_t i = 0; i < values.size(); ++i) samples.push_back({start_us + static_cast<double>(i) * period_us, 0, values[i]});
  Counter(name, v1::COUNTER_SOURCE_NVML, samples, device);
}

void SyntheticTrace::TopDown(double time_us, double window_kernel_us, const std::vector<Hot>& kernels) {
  std::vector<core::HotKernelChoice> chosen;
  for (const Hot& h : kernels) {
    core::HotKernelChoice c;
    c.name = std::string(h.config.name);
    c.device = h.config.device;
    c.shape.grid = {static_cast<uint32_t>(h.config.grid_x), static_cast<uint32_t>(h.config.grid_y),
                    static_cast<uint32_t>(h.config.grid_z)};
    c.shape.block = {static_cast<uint32_t>(h.config.block_x), static_cast<uint32_t>(h.config.block_y),
                     static_cast<uint32_t>(h.config.block_z)};
    c.total_ns = static_cast<uint64_t>(h.total_us * 1000.0);
    c.launches = h.launches;
    chosen.push_back(std::move(c));
  }
  builder_->AddTopDownSelection(Us(time_us), static_cast<uint64_t>(window_kernel_us * 1000.0), chosen);
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

void SyntheticTrace::NvtxRange(const std::string& name, double start_us, double end_us, uint64_t tid,
                               uint64_t end_tid) {
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
  if (end_tid != 0) a.tid = end_tid;
  builder_->Add(a);
  ++next_nvtx_;
}

void SyntheticTrace::NcclCall(const std::string& api, double start_us, double end_us, uint64_t communicator,
                              uint64_t bytes, int32_t extra, uint64_t tid) {
  core::NvtxActivity a;
  a.kind = v1::NVTX_KIND_RANGE_START;
  a.time = Us(start_us);
  a.id = next_nvtx_;
  a.pid = 42;
  a.tid = tid;
  a.name = api;
  a.domain = "NCCL";
  builder_->Add(a);
  if (bytes != 0) {
    core::NvtxPayloadRecord p;
    p.id = a.id;
    p.kind = v1::NVTX_PAYLOAD_KIND_EXTENDED;
    p.schema_id = (uint64_t{1} << 24) + 5;
    p.data.resize(24, '\0');
    std::memcpy(p.data.data(), &communicator, 8);
    std::memcpy(p.data.data() + 8, &bytes, 8);
    std::memcpy(p.data.data() + 16, &extra, 4);
    if (api == "ncclAllGather" || api == "ncclAllToAll") p.data.resize(16);
    builder_->Add(p);
  }
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
  EXPECT_TRUE((*writer)->WriteHeader(header_).ok());
  v1::Chunk chunk;
  builder_->TakeChunk(&chunk);
  chunk.mutable_stats()->set_records_written(1);
  if (clock_reference_.cupti_ns() != 0) *chunk.mutable_clock_reference() = clock_reference_;
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
