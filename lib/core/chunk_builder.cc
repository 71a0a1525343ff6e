#include "lib/core/chunk_builder.h"

#include <utility>

#include "lib/core/record_codec/counter_series.h"
#include "lib/core/record_codec/kernel_metrics.h"
#include "lib/core/record_codec/memcpy.h"
#include "lib/core/record_codec/memory_operation.h"
#include "lib/core/record_codec/memset.h"
#include "lib/core/record_codec/nvtx_marker.h"
#include "lib/core/record_codec/nvtx_payload.h"
#include "lib/core/record_codec/overhead.h"
#include "lib/core/record_codec/request_scope.h"
#include "lib/core/record_codec/synchronization.h"
#include "lib/core/record_codec/top_down.h"

namespace cuscope::core {

ChunkBuilder::ChunkBuilder(ApiNameResolver api_names) : api_names_(std::move(api_names)) {}

uint32_t ChunkBuilder::InternFrame(std::string_view module, uint64_t module_offset, std::string_view function,
                                   uint64_t function_offset, std::string_view build_id) {
  const uint32_t module_id = InternString(module.empty() ? std::string_view("?") : module);
  const auto key = std::make_pair(module_id, module_offset);
  if (auto it = frames_.find(key); it != frames_.end()) return it->second;
  const uint32_t id = ++frame_count_;
  frames_.emplace(key, id);
  v1::StackFrame* f = chunk_.add_stack_frames();
  f->set_id(id);
  f->set_module(module_id);
  f->set_module_offset(module_offset);
  f->set_function(InternString(function));
  f->set_function_offset(function.empty() ? 0 : function_offset);
  if (!build_id.empty()) f->set_module_build_id(build_id.data(), build_id.size());
  return id;
}

uint32_t ChunkBuilder::InternPythonFrame(std::string_view file, std::string_view function, uint32_t line) {
  const uint32_t file_id = InternString(file.empty() ? std::string_view("?") : file);
  const uint32_t function_id = InternString(function);
  const auto key = std::make_tuple(file_id, function_id, line);
  if (auto it = python_frames_.find(key); it != python_frames_.end()) return it->second;
  const uint32_t id = ++frame_count_;
  python_frames_.emplace(key, id);
  v1::StackFrame* f = chunk_.add_stack_frames();
  f->set_id(id);
  f->set_module(file_id);  // readers that know no source_file show "function (file)"
  f->set_function(function_id);
  f->set_source_file(file_id);
  f->set_line(line);
  return id;
}

uint32_t ChunkBuilder::InternStack(const std::vector<uint32_t>& frames) {
  if (auto it = stacks_.find(frames); it != stacks_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(stacks_.size() + 1);
  stacks_.emplace(frames, id);
  v1::CallStack* c = chunk_.add_call_stacks();
  c->set_id(id);
  c->mutable_frames()->Add(frames.begin(), frames.end());
  return id;
}

void ChunkBuilder::AddGraphNode(uint64_t node_id, uint32_t stack, uint64_t original_node_id, uint64_t created_ns,
                                uint32_t pid, uint64_t tid) {
  const uint32_t thread = tid != 0 ? InternThread(pid, tid) : 0;
  v1::GraphNodeStack* g = chunk_.add_graph_node_stacks();
  g->set_node_id(node_id);
  g->set_stack(stack);
  g->set_original_node_id(original_node_id);
  g->set_created_ns(created_ns);
  g->set_thread(thread);
  ++pending_;
}

void ChunkBuilder::AddLaunchStack(uint64_t correlation_id, uint32_t stack) {
  v1::LaunchStack* l = chunk_.add_launch_stacks();
  l->set_correlation_id(correlation_id);
  l->set_stack(stack);
  ++pending_;
}

uint32_t ChunkBuilder::InternString(std::string_view s) {
  if (s.empty()) return 0;
  if (auto p = strings_by_pointer_.find(s.data()); p != strings_by_pointer_.end() && string_texts_[p->second - 1] == s) {
    return p->second;
  }
  auto it = strings_.find(absl::string_view(s.data(), s.size()));
  // Names that do not come from stable pointers (copied into each buffer) must not grow the
  // cache without bound.
  if (strings_by_pointer_.size() > 4096) strings_by_pointer_.clear();
  if (it != strings_.end()) {
    strings_by_pointer_[s.data()] = it->second;
    return it->second;
  }
  const uint32_t id = static_cast<uint32_t>(strings_.size() + 1);
  strings_.emplace(std::string(s), id);
  string_texts_.emplace_back(s);
  strings_by_pointer_[s.data()] = id;
  auto* def = chunk_.add_strings();
  def->set_id(id);
  def->set_value(std::string(s));
  return id;
}

uint32_t ChunkBuilder::InternSignature(const KernelConfig& c) {
  const KernelSignatureKey key = KernelSignatureKeyOf(c, InternString(c.name));
  auto [it, inserted] = signatures_.try_emplace(key, static_cast<uint32_t>(signatures_.size() + 1));
  if (inserted) EncodeKernelSignature(key, it->second, chunk_.add_kernel_signatures());
  return it->second;
}

uint32_t ChunkBuilder::InternFunction(v1::ApiDomain domain, uint32_t callback_id) {
  const uint64_t key = (static_cast<uint64_t>(domain) << 32) | callback_id;
  auto [it, inserted] = functions_.try_emplace(key, static_cast<uint32_t>(functions_.size() + 1));
  if (inserted) {
    const uint32_t name = InternString(api_names_ ? api_names_(domain, callback_id) : std::string());
    auto* f = chunk_.add_api_functions();
    f->set_id(it->second);
    f->set_domain(domain);
    f->set_callback_id(callback_id);
    f->set_name(name);
  }
  return it->second;
}

uint32_t ChunkBuilder::InternThread(uint32_t pid, uint64_t tid) {
  auto [it, inserted] = threads_.try_emplace(std::make_pair(pid, tid), static_cast<uint32_t>(threads_.size() + 1));
  if (inserted) {
    auto* t = chunk_.add_threads();
    t->set_id(it->second);
    t->set_pid(pid);
    t->set_tid(tid);
  }
  return it->second;
}

uint64_t ChunkBuilder::BaseTime(uint64_t t) {
  if (!have_base_) {
    have_base_ = true;
    base_time_ = t;
  }
  return base_time_;
}

void ChunkBuilder::Add(const KernelActivity& a) {
  const uint32_t sig = InternSignature(a.config);
  kernel_columns_.Append(a, sig, BaseTime(a.start), chunk_.mutable_kernels());
  ++pending_;
  if (kernel_totals_on_ && (a.flags & v1::KERNEL_FLAG_REPLAYED) == 0 && a.end > a.start) {
    if (signature_totals_.size() < sig) signature_totals_.resize(sig);
    SignatureTotal& t = signature_totals_[sig - 1];
    if (t.launches == 0) {
      t.name = InternString(a.config.name);
      t.device = a.config.device;
      t.shape.grid = {static_cast<uint32_t>(a.config.grid_x), static_cast<uint32_t>(a.config.grid_y),
                      static_cast<uint32_t>(a.config.grid_z)};
      t.shape.block = {static_cast<uint32_t>(a.config.block_x), static_cast<uint32_t>(a.config.block_y),
                       static_cast<uint32_t>(a.config.block_z)};
    }
    t.ns += a.end - a.start;
    ++t.launches;
    total_kernel_ns_ += a.end - a.start;
  }
}

std::vector<HotKernelChoice> ChunkBuilder::KernelTotals() const {
  std::vector<HotKernelChoice> out;
  out.reserve(signature_totals_.size());
  for (const SignatureTotal& t : signature_totals_) {
    if (t.launches == 0) continue;
    HotKernelChoice& k = out.emplace_back();
    k.name = string_texts_[t.name - 1];
    k.device = t.device;
    k.shape = t.shape;
    k.total_ns = t.ns;
    k.launches = t.launches;
  }
  return out;
}

void ChunkBuilder::Add(const ApiActivity& a) {
  const uint32_t function = InternFunction(a.domain, a.callback_id);
  const uint32_t thread = InternThread(a.pid, a.tid);
  api_call_columns_.Append(a, function, thread, BaseTime(a.start), chunk_.mutable_api_calls());
  ++pending_;
}

void ChunkBuilder::Add(const MemcpyRecord& r) {
  EncodeMemcpy(r, BaseTime(r.start), chunk_.add_memcpys());
  ++pending_;
}

void ChunkBuilder::Add(const MemsetRecord& r) {
  EncodeMemset(r, BaseTime(r.start), chunk_.add_memsets());
  ++pending_;
}

void ChunkBuilder::Add(const SyncRecord& r) {
  EncodeSynchronization(r, BaseTime(r.start), chunk_.add_synchronizations());
  ++pending_;
}

void ChunkBuilder::Add(const NvtxActivity& a) {
  // Interned in this order so that ids are assigned as they always were.
  const uint32_t thread = InternThread(a.pid, a.tid);
  const uint32_t name = InternString(a.name);
  const uint32_t domain = InternString(a.domain);
  EncodeNvtxMarker(a, thread, name, domain, BaseTime(a.time), chunk_.add_nvtx_markers());
  ++pending_;
}

void ChunkBuilder::Add(const NvtxPayloadRecord& p) {
  EncodeNvtxPayload(p, chunk_.add_nvtx_payloads());
  ++pending_;  // as a launch stack: the chunk is written for it
}

void ChunkBuilder::Add(const MemoryOpRecord& r) {
  EncodeMemoryOperation(r, BaseTime(r.time), chunk_.add_memory_operations());
  ++pending_;
}

void ChunkBuilder::Add(const OverheadActivity& a) {
  overhead_ns_ += a.end > a.start ? a.end - a.start : 0;
  const uint32_t kind = InternString(a.kind);
  const uint32_t thread = InternThread(a.pid, a.tid);
  EncodeOverhead(a, kind, thread, BaseTime(a.start), chunk_.add_overheads());
  ++pending_;
}

void ChunkBuilder::Add(const RequestScopeActivity& r) {
  if (r.end == 0) return;  // a scope's begin: the trace keeps it whole, at its end
  const uint32_t thread = InternThread(r.pid, r.tid);
  const uint32_t route = InternString(r.route);
  EncodeRequestScope(r, thread, route, BaseTime(r.start), chunk_.add_request_scopes());
  ++pending_;
}

void ChunkBuilder::AddKernelMetrics(uint64_t correlation_id, uint32_t device, std::string_view kernel_name,
                                    uint32_t pass_count, v1::ReplayMode replay_mode,
                                    const std::vector<std::pair<std::string, double>>& values,
                                    const LaunchShape* shape) {
  MetricRow row;
  row.correlation_id = correlation_id;
  row.device = device;
  row.pass_count = pass_count;
  row.replay_mode = replay_mode;
  if (shape != nullptr) {
    row.grid = shape->grid;
    row.block = shape->block;
  }
  row.kernel_name = InternString(kernel_name);
  row.values.reserve(values.size());
  for (const auto& [name, value] : values) row.values.emplace_back(InternString(name), value);
  EncodeKernelMetrics(row, chunk_.add_kernel_metrics());
  ++pending_;
}

void ChunkBuilder::AddWindow(v1::WindowKind kind, uint64_t start_ns, uint64_t end_ns, std::string_view reason) {
  auto* w = chunk_.add_windows();
  w->set_kind(kind);
  w->set_start_ns(start_ns);
  w->set_end_ns(end_ns);
  w->set_reason(std::string(reason));
}

void ChunkBuilder::AddCounterSeries(uint32_t device, v1::CounterSource source, std::string_view name,
                                    const std::vector<CounterPoint>& points) {
  if (points.empty()) return;
  const uint32_t name_id = InternString(name);
  EncodeCounterSeries(device, source, name_id, points, BaseTime(points.front().start), chunk_.add_counter_series());
  pending_ += points.size();
}

void ChunkBuilder::AddTopDownSelection(uint64_t time_ns, uint64_t window_kernel_ns,
                                       const std::vector<HotKernelChoice>& kernels) {
  v1::TopDownSelection* selection = chunk_.mutable_top_down();
  EncodeTopDownSelection(time_ns, window_kernel_ns, selection);
  for (const HotKernelChoice& k : kernels) EncodeHotKernel(k, InternString(k.name), selection->add_kernels());
  ++pending_;
}

void ChunkBuilder::TakeChunk(v1::Chunk* out) {
  chunk_.set_sequence(sequence_++);
  chunk_.set_base_time_ns(base_time_);
  out->Clear();
  out->Swap(&chunk_);
  have_base_ = false;
  base_time_ = 0;
  pending_ = 0;
  kernel_columns_.Reset();
  api_call_columns_.Reset();
}

}  // namespace cuscope::core
