#include "lib/core/trace_reader.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/core/trace_format.h"

namespace cuscope::core {
namespace {

constexpr size_t kReadSize = 1 << 20;

absl::Status Corrupt(const std::string& what) { return absl::DataLossError(absl::StrCat("corrupt trace: ", what)); }

// Checks that an optional column is empty or has one entry per row.
template <typename Column>
bool OptionalColumnOk(const Column& c, int rows) {
  return c.empty() || c.size() == rows;
}

// Ids a row may carry: a defined thread, a defined string or none (0).
bool ThreadOk(const Dictionary& dict, uint32_t id) { return id > 0 && id <= dict.thread_count(); }
bool StringOk(const Dictionary& dict, uint32_t id) { return id <= dict.string_count(); }
bool DeviceOk(uint32_t device) { return device < kMaxDevices; }

absl::Status BadDevice(const std::string& what, uint32_t device) {
  return Corrupt(absl::StrCat(what, " names device ", device, " (device ids are below ", kMaxDevices, ")"));
}

// A signature's launch configuration within what CUPTI can report (trace_reader.h).
absl::Status CheckSignature(const v1::KernelSignature& s) {
  if (!DeviceOk(s.device())) return BadDevice(absl::StrCat("kernel signature ", s.id()), s.device());
  if (s.registers_per_thread() > kMaxRegistersPerThreadField) {
    return Corrupt(absl::StrCat("kernel signature ", s.id(), " has ", s.registers_per_thread(),
                                " registers per thread (CUPTI's field holds at most ", kMaxRegistersPerThreadField, ")"));
  }
  if (s.static_shared_memory() < 0 || s.dynamic_shared_memory() < 0) {
    return Corrupt(absl::StrCat("kernel signature ", s.id(), " has negative shared memory"));
  }
  if (s.grid_x() < 0 || s.grid_y() < 0 || s.grid_z() < 0 || s.block_x() < 0 || s.block_y() < 0 || s.block_z() < 0) {
    return Corrupt(absl::StrCat("kernel signature ", s.id(), " has a negative grid or block dimension"));
  }
  return absl::OkStatus();
}

// The header's devices: as many and as numbered as a process can see (trace_reader.h).
absl::Status CheckHeader(const v1::Header& header) {
  if (header.devices_size() > static_cast<int>(kMaxDevices)) {
    return Corrupt(absl::StrCat("the header declares ", header.devices_size(), " devices (at most ", kMaxDevices, ")"));
  }
  for (const v1::Device& d : header.devices()) {
    if (!DeviceOk(d.id())) return BadDevice("the header", d.id());
  }
  return absl::OkStatus();
}

}  // namespace

void DecodedChunk::Clear() {
  sequence = 0;
  ClearRows();
  windows.clear();
  top_down.reset();
  stats.reset();
}

absl::Status DecodeChunk(const v1::Chunk& chunk, const Dictionary& dict, DecodedChunk* out) {
  out->Clear();
  out->sequence = chunk.sequence();
  const uint64_t base = chunk.base_time_ns();
  // The signatures this chunk defines (the dictionary holds them already): checked once here, so
  // that a kernel row's device and launch configuration need no check of their own.
  for (const v1::KernelSignature& s : chunk.kernel_signatures()) {
    if (auto st = CheckSignature(s); !st.ok()) return st;
  }

  const auto& k = chunk.kernels();
  const int nk = k.start_delta_size();
  if (k.duration_size() != nk || k.signature_size() != nk || k.stream_size() != nk ||
      k.correlation_delta_size() != nk || !OptionalColumnOk(k.graph_id(), nk) ||
      !OptionalColumnOk(k.graph_node_id(), nk) || !OptionalColumnOk(k.flags(), nk)) {
    return Corrupt(absl::StrCat("kernel columns of chunk ", chunk.sequence(), " differ in length"));
  }
  out->kernels.resize(nk);
  uint64_t t = base, corr = 0;
  for (int i = 0; i < nk; ++i) {
    KernelRow& r = out->kernels[i];
    t += static_cast<uint64_t>(k.start_delta(i));
    corr += static_cast<uint64_t>(k.correlation_delta(i));
    r.start = t;
    r.end = t + k.duration(i);
    r.correlation_id = corr;
    r.signature = k.signature(i);
    if (!dict.has_signature(r.signature)) {
      return Corrupt(absl::StrCat("kernel row uses undefined signature ", r.signature));
    }
    r.stream = k.stream(i);
    if (!k.graph_id().empty()) r.graph_id = k.graph_id(i);
    if (!k.graph_node_id().empty()) r.graph_node_id = k.graph_node_id(i);
    if (!k.flags().empty()) r.flags = k.flags(i);
  }

  const auto& a = chunk.api_calls();
  const int na = a.start_delta_size();
  if (a.duration_size() != na || a.function_size() != na || a.thread_size() != na ||
      a.correlation_delta_size() != na || !OptionalColumnOk(a.return_code(), na)) {
    return Corrupt(absl::StrCat("API call columns of chunk ", chunk.sequence(), " differ in length"));
  }
  out->api_calls.resize(na);
  t = base;
  corr = 0;
  for (int i = 0; i < na; ++i) {
    ApiCallRow& r = out->api_calls[i];
    t += static_cast<uint64_t>(a.start_delta(i));
    corr += static_cast<uint64_t>(a.correlation_delta(i));
    r.start = t;
    r.end = t + a.duration(i);
    r.correlation_id = corr;
    r.function = a.function(i);
    r.thread = a.thread(i);
    if (r.function == 0 || r.function > dict.function_count() || r.thread == 0 || r.thread > dict.thread_count()) {
      return Corrupt("API call row uses an undefined function or thread");
    }
    if (!a.return_code().empty()) r.return_code = a.return_code(i);
  }

  out->memcpys.reserve(chunk.memcpys_size());
  for (const auto& m : chunk.memcpys()) {
    MemcpyRecord& r = out->memcpys.emplace_back();
    r.start = base + static_cast<uint64_t>(m.start());
    r.end = r.start + m.duration();
    r.copy_kind = m.copy_kind();
    r.src_kind = m.src_kind();
    r.dst_kind = m.dst_kind();
    r.bytes = m.bytes();
    r.device = m.device();
    r.context = m.context();
    r.stream = m.stream();
    r.correlation_id = m.correlation_id();
    r.async = m.async();
    r.graph_id = m.graph_id();
    r.graph_node_id = m.graph_node_id();
    if (!DeviceOk(r.device)) return BadDevice("copy row", r.device);
  }
  out->memsets.reserve(chunk.memsets_size());
  for (const auto& m : chunk.memsets()) {
    MemsetRecord& r = out->memsets.emplace_back();
    r.start = base + static_cast<uint64_t>(m.start());
    r.end = r.start + m.duration();
    r.bytes = m.bytes();
    r.value = m.value();
    r.memory_kind = m.memory_kind();
    r.device = m.device();
    r.context = m.context();
    r.stream = m.stream();
    r.correlation_id = m.correlation_id();
    r.async = m.async();
    r.graph_id = m.graph_id();
    r.graph_node_id = m.graph_node_id();
    if (!DeviceOk(r.device)) return BadDevice("memset row", r.device);
  }
  out->syncs.reserve(chunk.synchronizations_size());
  for (const auto& s : chunk.synchronizations()) {
    SyncRecord& r = out->syncs.emplace_back();
    r.start = base + static_cast<uint64_t>(s.start());
    r.end = r.start + s.duration();
    r.type = s.type();
    r.context = s.context();
    r.stream = s.stream();
    r.event = s.event();
    r.correlation_id = s.correlation_id();
  }
  out->nvtx.reserve(chunk.nvtx_markers_size());
  for (const auto& m : chunk.nvtx_markers()) {
    NvtxRow& r = out->nvtx.emplace_back();
    r.time = base + static_cast<uint64_t>(m.time());
    r.kind = m.kind();
    r.id = m.id();
    r.thread = m.thread();
    r.name = m.name();
    r.domain = m.domain();
    if (!ThreadOk(dict, r.thread) || !StringOk(dict, r.name) || !StringOk(dict, r.domain)) {
      return Corrupt("NVTX row uses an undefined thread or string");
    }
  }
  out->memory_ops.reserve(chunk.memory_operations_size());
  for (const auto& m : chunk.memory_operations()) {
    MemoryOpRecord& r = out->memory_ops.emplace_back();
    r.time = base + static_cast<uint64_t>(m.time());
    r.type = m.type();
    r.memory_kind = m.memory_kind();
    r.bytes = m.bytes();
    r.address = m.address();
    r.device = m.device();
    r.context = m.context();
    r.stream = m.stream();
    r.correlation_id = m.correlation_id();
    r.async = m.async();
  }
  out->overheads.reserve(chunk.overheads_size());
  for (const auto& o : chunk.overheads()) {
    OverheadRow& r = out->overheads.emplace_back();
    r.start = base + static_cast<uint64_t>(o.start());
    r.end = r.start + o.duration();
    r.kind = o.kind();
    r.thread = o.thread();
    r.correlation_id = o.correlation_id();
    if (!ThreadOk(dict, r.thread) || !StringOk(dict, r.kind)) {
      return Corrupt("overhead row uses an undefined thread or string");
    }
  }
  out->metrics.reserve(chunk.kernel_metrics_size());
  for (const auto& m : chunk.kernel_metrics()) {
    MetricRow& r = out->metrics.emplace_back();
    r.correlation_id = m.correlation_id();
    r.device = m.device();
    r.pass_count = m.pass_count();
    r.replay_mode = m.replay_mode();
    r.kernel_name = m.kernel_name();
    r.grid = {m.grid_x(), m.grid_y(), m.grid_z()};
    r.block = {m.block_x(), m.block_y(), m.block_z()};
    if (!StringOk(dict, r.kernel_name)) return Corrupt("metric row uses an undefined string");
    if (!DeviceOk(r.device)) return BadDevice("metric row", r.device);
    for (const auto& v : m.values()) {
      if (!StringOk(dict, v.name())) return Corrupt("metric row uses an undefined string");
      r.values.emplace_back(v.name(), v.value());
    }
  }
  for (const auto& series : chunk.counter_series()) {
    const int n = series.start_delta_size();
    if (series.value_size() != n || !OptionalColumnOk(series.duration(), n)) {
      return Corrupt(absl::StrCat("counter columns of chunk ", chunk.sequence(), " differ in length"));
    }
    if (!StringOk(dict, series.name())) return Corrupt("counter series uses an undefined string");
    if (!DeviceOk(series.device())) return BadDevice("counter series", series.device());
    uint64_t start = base;
    for (int i = 0; i < n; ++i) {
      CounterSample& r = out->counter_samples.emplace_back();
      start += static_cast<uint64_t>(series.start_delta(i));
      r.start = start;
      r.end = start + (series.duration_size() > 0 ? series.duration(i) : 0);
      r.device = series.device();
      r.source = series.source();
      r.name = series.name();
      r.value = series.value(i);
    }
  }
  if (chunk.has_top_down()) {
    for (const auto& hot : chunk.top_down().kernels()) {
      if (!StringOk(dict, hot.name())) return Corrupt("top-down selection uses an undefined string");
      if (!DeviceOk(hot.device())) return BadDevice("top-down selection", hot.device());
    }
    out->top_down = chunk.top_down();
  }
  out->windows.assign(chunk.windows().begin(), chunk.windows().end());
  if (chunk.has_stats()) out->stats = chunk.stats();
  return absl::OkStatus();
}

TraceReader::~TraceReader() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::unique_ptr<TraceReader> r(new TraceReader());
  r->file_ = f;
  if (auto st = r->ReadHeader(); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat(path, ": ", st.message()));
  }
  return r;
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::FromBytes(std::string bytes) {
  std::unique_ptr<TraceReader> r(new TraceReader());
  r->buffer_ = std::move(bytes);
  r->eof_ = true;
  if (auto st = r->ReadHeader(); !st.ok()) return st;
  return r;
}

bool TraceReader::Fill(size_t n) {
  while (buffer_.size() - pos_ < n && !eof_) {
    if (pos_ > 0) {
      buffer_.erase(0, pos_);
      pos_ = 0;
    }
    const size_t old = buffer_.size();
    // Grow by reads of a fixed size: a length prefix promising a huge block costs memory only as
    // far as the file really goes.
    const size_t want = kReadSize;
    buffer_.resize(old + want);
    const size_t got = std::fread(buffer_.data() + old, 1, want, file_);
    buffer_.resize(old + got);
    if (got == 0) eof_ = true;
  }
  return buffer_.size() - pos_ >= n;
}

absl::Status TraceReader::ReadHeader() {
  if (!Fill(kTraceMagic.size()) || std::string_view(buffer_).substr(pos_, kTraceMagic.size()) != kTraceMagic) {
    return absl::InvalidArgumentError("not a cuscope trace (bad magic)");
  }
  pos_ += kTraceMagic.size();
  consumed_ = kTraceMagic.size();
  auto got = ReadBlock();
  if (!got.ok()) return got.status();
  if (!*got || !block_.has_header() || block_.header().format_version() == 0) {
    return absl::InvalidArgumentError("not a cuscope trace (no header)");
  }
  header_.Swap(block_.mutable_header());
  if (header_.format_version() > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat("trace format version ", header_.format_version(),
                                                      " is newer than this cuscope reads (", kFormatVersion,
                                                      "); upgrade cuscope"));
  }
  return CheckHeader(header_);
}

absl::StatusOr<bool> TraceReader::ReadBlock() {
  Fill(10);
  std::string_view view(buffer_);
  view.remove_prefix(pos_);
  if (view.empty()) return false;
  size_t p = 0;
  bool malformed = false;
  auto len = ReadVarint(view, &p, &malformed);
  if (malformed) return Corrupt(absl::StrCat("bad block length at byte ", consumed_));
  if (!len) {  // cut inside the length prefix
    tail_dropped_ = view.size();
    pos_ = buffer_.size();
    return false;
  }
  if (*len > kMaxBlockBytes) {
    return Corrupt(absl::StrCat("block of ", *len, " bytes at byte ", consumed_, " exceeds the limit"));
  }
  if (!Fill(p + *len)) {  // cut inside the block
    tail_dropped_ = buffer_.size() - pos_;
    pos_ = buffer_.size();
    return false;
  }
  const char* payload = buffer_.data() + pos_ + p;
  if (!block_.ParseFromArray(payload, static_cast<int>(*len))) {
    return Corrupt(absl::StrCat("block at byte ", consumed_, " does not decode"));
  }
  pos_ += p + *len;
  consumed_ += p + *len;
  return true;
}

absl::StatusOr<bool> TraceReader::Next(DecodedChunk* out) {
  while (true) {
    const uint64_t offset = consumed_;
    auto got = ReadBlock();
    if (!got.ok()) return got.status();
    if (!*got) return false;
    if (block_.has_header()) return Corrupt(absl::StrCat("second header at byte ", offset));
    if (!block_.has_chunk()) continue;  // a block kind newer than this reader: skip it
    if (auto st = dict_.Absorb(block_.chunk()); !st.ok()) return st;
    if (auto st = DecodeChunk(block_.chunk(), dict_, out); !st.ok()) return st;
    ++chunks_read_;
    return true;
  }
}

}  // namespace cuscope::core
