#include "lib/core/chunk_builder.h"

#include <utility>

namespace cuscope::core {
namespace {

// Appends `value` to an optional column: the column stays empty while every row is zero, and is
// back-filled with zeros up to `row` the first time a non-zero value arrives.
template <typename Field, typename V>
void AppendOptional(Field* column, uint64_t row, V value) {
  if (column->empty()) {
    if (value == 0) return;
    column->Reserve(static_cast<int>(row + 1));
    for (uint64_t i = 0; i < row; ++i) column->Add(0);
  }
  column->Add(value);
}

}  // namespace

ChunkBuilder::ChunkBuilder(ApiNameResolver api_names) : api_names_(std::move(api_names)) {}

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
  const SignatureKey key{InternString(c.name), c.device, c.context, c.grid_x, c.grid_y, c.grid_z,
                         c.block_x, c.block_y, c.block_z, c.registers_per_thread, c.static_shared_memory,
                         c.dynamic_shared_memory, c.local_memory_per_thread, static_cast<int32_t>(c.launch_type),
                         c.cluster_x, c.cluster_y, c.cluster_z, c.shared_memory_executed, c.device_launched};
  auto [it, inserted] = signatures_.try_emplace(key, static_cast<uint32_t>(signatures_.size() + 1));
  if (inserted) {
    auto* s = chunk_.add_kernel_signatures();
    s->set_id(it->second);
    s->set_name(key.name);
    s->set_device(c.device);
    s->set_context(c.context);
    s->set_grid_x(c.grid_x);
    s->set_grid_y(c.grid_y);
    s->set_grid_z(c.grid_z);
    s->set_block_x(c.block_x);
    s->set_block_y(c.block_y);
    s->set_block_z(c.block_z);
    s->set_registers_per_thread(c.registers_per_thread);
    s->set_static_shared_memory(c.static_shared_memory);
    s->set_dynamic_shared_memory(c.dynamic_shared_memory);
    s->set_local_memory_per_thread(c.local_memory_per_thread);
    s->set_launch_type(c.launch_type);
    s->set_cluster_x(c.cluster_x);
    s->set_cluster_y(c.cluster_y);
    s->set_cluster_z(c.cluster_z);
    s->set_shared_memory_executed(c.shared_memory_executed);
    s->set_device_launched(c.device_launched);
  }
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

int64_t ChunkBuilder::Relative(uint64_t t) {
  if (!have_base_) {
    have_base_ = true;
    base_time_ = t;
  }
  return static_cast<int64_t>(t - base_time_);
}

void ChunkBuilder::Add(const KernelActivity& a) {
  const uint32_t sig = InternSignature(a.config);
  auto* k = chunk_.mutable_kernels();
  if (kernel_rows_ == 0) {
    k->add_start_delta(Relative(a.start));
    k->add_correlation_delta(static_cast<int64_t>(a.correlation_id));
  } else {
    k->add_start_delta(static_cast<int64_t>(a.start - kernel_prev_start_));
    k->add_correlation_delta(static_cast<int64_t>(a.correlation_id - kernel_prev_corr_));
  }
  k->add_duration(a.end >= a.start ? a.end - a.start : 0);
  k->add_signature(sig);
  k->add_stream(a.stream);
  AppendOptional(k->mutable_graph_id(), kernel_rows_, a.graph_id);
  AppendOptional(k->mutable_graph_node_id(), kernel_rows_, a.graph_node_id);
  AppendOptional(k->mutable_flags(), kernel_rows_, a.flags);
  kernel_prev_start_ = a.start;
  kernel_prev_corr_ = a.correlation_id;
  ++kernel_rows_;
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
  const uint32_t fn = InternFunction(a.domain, a.callback_id);
  const uint32_t th = InternThread(a.pid, a.tid);
  auto* c = chunk_.mutable_api_calls();
  if (api_rows_ == 0) {
    c->add_start_delta(Relative(a.start));
    c->add_correlation_delta(static_cast<int64_t>(a.correlation_id));
  } else {
    c->add_start_delta(static_cast<int64_t>(a.start - api_prev_start_));
    c->add_correlation_delta(static_cast<int64_t>(a.correlation_id - api_prev_corr_));
  }
  c->add_duration(a.end >= a.start ? a.end - a.start : 0);
  c->add_function(fn);
  c->add_thread(th);
  AppendOptional(c->mutable_return_code(), api_rows_, a.return_code);
  api_prev_start_ = a.start;
  api_prev_corr_ = a.correlation_id;
  ++api_rows_;
  ++pending_;
}

void ChunkBuilder::Add(const MemcpyRecord& r) {
  auto* m = chunk_.add_memcpys();
  m->set_start(Relative(r.start));
  m->set_duration(r.end >= r.start ? r.end - r.start : 0);
  m->set_copy_kind(r.copy_kind);
  m->set_src_kind(r.src_kind);
  m->set_dst_kind(r.dst_kind);
  m->set_bytes(r.bytes);
  m->set_device(r.device);
  m->set_context(r.context);
  m->set_stream(r.stream);
  m->set_correlation_id(r.correlation_id);
  m->set_async(r.async);
  m->set_graph_id(r.graph_id);
  m->set_graph_node_id(r.graph_node_id);
  ++pending_;
}

void ChunkBuilder::Add(const MemsetRecord& r) {
  auto* m = chunk_.add_memsets();
  m->set_start(Relative(r.start));
  m->set_duration(r.end >= r.start ? r.end - r.start : 0);
  m->set_bytes(r.bytes);
  m->set_value(r.value);
  m->set_memory_kind(r.memory_kind);
  m->set_device(r.device);
  m->set_context(r.context);
  m->set_stream(r.stream);
  m->set_correlation_id(r.correlation_id);
  m->set_async(r.async);
  m->set_graph_id(r.graph_id);
  m->set_graph_node_id(r.graph_node_id);
  ++pending_;
}

void ChunkBuilder::Add(const SyncRecord& r) {
  auto* s = chunk_.add_synchronizations();
  s->set_start(Relative(r.start));
  s->set_duration(r.end >= r.start ? r.end - r.start : 0);
  s->set_type(r.type);
  s->set_context(r.context);
  s->set_stream(r.stream);
  s->set_event(r.event);
  s->set_correlation_id(r.correlation_id);
  ++pending_;
}

void ChunkBuilder::Add(const NvtxActivity& a) {
  auto* m = chunk_.add_nvtx_markers();
  m->set_time(Relative(a.time));
  m->set_kind(a.kind);
  m->set_id(a.id);
  m->set_thread(InternThread(a.pid, a.tid));
  m->set_name(InternString(a.name));
  m->set_domain(InternString(a.domain));
  ++pending_;
}

void ChunkBuilder::Add(const MemoryOpRecord& r) {
  auto* m = chunk_.add_memory_operations();
  m->set_time(Relative(r.time));
  m->set_type(r.type);
  m->set_memory_kind(r.memory_kind);
  m->set_bytes(r.bytes);
  m->set_address(r.address);
  m->set_device(r.device);
  m->set_context(r.context);
  m->set_stream(r.stream);
  m->set_correlation_id(r.correlation_id);
  m->set_async(r.async);
  ++pending_;
}

void ChunkBuilder::Add(const OverheadActivity& a) {
  overhead_ns_ += a.end > a.start ? a.end - a.start : 0;
  auto* o = chunk_.add_overheads();
  o->set_start(Relative(a.start));
  o->set_duration(a.end >= a.start ? a.end - a.start : 0);
  o->set_kind(InternString(a.kind));
  o->set_thread(InternThread(a.pid, a.tid));
  o->set_correlation_id(a.correlation_id);
  ++pending_;
}

void ChunkBuilder::AddKernelMetrics(uint64_t correlation_id, uint32_t device, std::string_view kernel_name,
                                    uint32_t pass_count, v1::ReplayMode replay_mode,
                                    const std::vector<std::pair<std::string, double>>& values,
                                    const LaunchShape* shape) {
  auto* m = chunk_.add_kernel_metrics();
  if (shape != nullptr) {
    m->set_grid_x(shape->grid[0]);
    m->set_grid_y(shape->grid[1]);
    m->set_grid_z(shape->grid[2]);
    m->set_block_x(shape->block[0]);
    m->set_block_y(shape->block[1]);
    m->set_block_z(shape->block[2]);
  }
  m->set_correlation_id(correlation_id);
  m->set_device(device);
  m->set_kernel_name(InternString(kernel_name));
  m->set_pass_count(pass_count);
  m->set_replay_mode(replay_mode);
  for (const auto& [name, value] : values) {
    auto* v = m->add_values();
    v->set_name(InternString(name));
    v->set_value(value);
  }
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
  auto* s = chunk_.add_counter_series();
  s->set_device(device);
  s->set_source(source);
  s->set_name(InternString(name));
  bool any_duration = false;
  for (const auto& p : points) any_duration = any_duration || p.end > p.start;
  uint64_t prev = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    s->add_start_delta(i == 0 ? Relative(p.start) : static_cast<int64_t>(p.start - prev));
    prev = p.start;
    if (any_duration) s->add_duration(p.end > p.start ? p.end - p.start : 0);
    s->add_value(p.value);
  }
  pending_ += points.size();
}

void ChunkBuilder::AddTopDownSelection(uint64_t time_ns, uint64_t window_kernel_ns,
                                       const std::vector<HotKernelChoice>& kernels) {
  auto* sel = chunk_.mutable_top_down();
  sel->set_time_ns(time_ns);
  sel->set_window_kernel_ns(window_kernel_ns);
  for (const auto& k : kernels) {
    auto* h = sel->add_kernels();
    h->set_name(InternString(k.name));
    h->set_device(k.device);
    h->set_grid_x(k.shape.grid[0]);
    h->set_grid_y(k.shape.grid[1]);
    h->set_grid_z(k.shape.grid[2]);
    h->set_block_x(k.shape.block[0]);
    h->set_block_y(k.shape.block[1]);
    h->set_block_z(k.shape.block[2]);
    h->set_total_ns(k.total_ns);
    h->set_launches(k.launches);
  }
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
  kernel_rows_ = api_rows_ = 0;
  kernel_prev_start_ = kernel_prev_corr_ = api_prev_start_ = api_prev_corr_ = 0;
}

}  // namespace cuscope::core
