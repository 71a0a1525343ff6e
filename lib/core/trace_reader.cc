#include "lib/core/trace_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/core/record_codec/api_call.h"
#include "lib/core/record_codec/counter_series.h"
#include "lib/core/record_codec/monitor_interval.h"
#include "lib/core/record_codec/kernel.h"
#include "lib/core/record_codec/kernel_metrics.h"
#include "lib/core/record_codec/memcpy.h"
#include "lib/core/record_codec/memory_operation.h"
#include "lib/core/record_codec/memset.h"
#include "lib/core/record_codec/nvtx_marker.h"
#include "lib/core/record_codec/overhead.h"
#include "lib/core/record_codec/request_scope.h"
#include "lib/core/record_codec/synchronization.h"
#include "lib/core/record_codec/nvtx_payload.h"
#include "lib/core/record_codec/top_down.h"
#include "lib/core/trace_format.h"

namespace cuscope::core {
namespace {

constexpr size_t kReadSize = 1 << 20;

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

// Decodes each message of `messages` into a new row of `rows`, stopping at the first damage.
template <typename Messages, typename Row, typename Decode>
absl::Status DecodeEach(const Messages& messages, const ChunkContext& chunk, std::vector<Row>* rows, Decode decode) {
  rows->reserve(messages.size());
  for (const auto& m : messages) {
    if (auto st = decode(m, chunk, &rows->emplace_back()); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

void DecodedChunk::Clear() {
  sequence = 0;
  ClearRows();
  windows.clear();
  top_down.reset();
  monitor_intervals.clear();
  stats.reset();
  clock_reference.reset();
}

absl::Status DecodeChunk(const v1::Chunk& chunk, const Dictionary& dict, DecodedChunk* out) {
  out->Clear();
  out->sequence = chunk.sequence();
  const ChunkContext context{dict, chunk.base_time_ns(), chunk.sequence()};
  // The signatures this chunk defines (the dictionary holds them already): checked once here, so
  // that a kernel row's device and launch configuration need no check of their own.
  for (const v1::KernelSignature& s : chunk.kernel_signatures()) {
    if (auto st = CheckKernelSignature(s); !st.ok()) return st;
  }
  if (auto st = DecodeKernelColumns(chunk.kernels(), context, &out->kernels); !st.ok()) return st;
  if (auto st = DecodeApiCallColumns(chunk.api_calls(), context, &out->api_calls); !st.ok()) return st;
  if (auto st = DecodeEach(chunk.memcpys(), context, &out->memcpys, DecodeMemcpy); !st.ok()) return st;
  if (auto st = DecodeEach(chunk.memsets(), context, &out->memsets, DecodeMemset); !st.ok()) return st;
  if (auto st = DecodeEach(chunk.synchronizations(), context, &out->syncs, DecodeSynchronization); !st.ok()) {
    return st;
  }
  if (auto st = DecodeEach(chunk.nvtx_markers(), context, &out->nvtx, DecodeNvtxMarker); !st.ok()) return st;
  if (auto st = DecodeEach(chunk.memory_operations(), context, &out->memory_ops, DecodeMemoryOperation); !st.ok()) {
    return st;
  }
  if (auto st = DecodeEach(chunk.overheads(), context, &out->overheads, DecodeOverhead); !st.ok()) return st;
  if (auto st = DecodeEach(chunk.kernel_metrics(), context, &out->metrics, DecodeKernelMetrics); !st.ok()) return st;
  for (const v1::CounterSeries& series : chunk.counter_series()) {
    if (auto st = DecodeCounterSeries(series, context, &out->counter_samples); !st.ok()) return st;
  }
  if (chunk.has_top_down()) {
    if (auto st = CheckTopDownSelection(chunk.top_down(), context); !st.ok()) return st;
    out->top_down = chunk.top_down();
  }
  if (chunk.has_clock_reference()) out->clock_reference = chunk.clock_reference();
  if (auto st = DecodeEach(chunk.nvtx_payloads(), context, &out->nvtx_payloads, DecodeNvtxPayload); !st.ok()) {
    return st;
  }
  if (auto st = DecodeEach(chunk.request_scopes(), context, &out->request_scopes, DecodeRequestScope); !st.ok()) {
    return st;
  }
  for (const v1::MonitorInterval& interval : chunk.monitor_intervals()) {
    if (auto st = CheckMonitorInterval(interval, context); !st.ok()) return st;
  }
  out->monitor_intervals.assign(chunk.monitor_intervals().begin(), chunk.monitor_intervals().end());
  out->launch_stacks.reserve(chunk.launch_stacks_size());
  for (const v1::LaunchStack& l : chunk.launch_stacks()) {
    if (!dict.has_stack(l.stack())) {
      return absl::DataLossError(absl::StrCat("corrupt trace: a launch names undefined call stack ", l.stack()));
    }
    out->launch_stacks.push_back({l.correlation_id(), l.stack()});
  }
  out->graph_nodes.reserve(chunk.graph_node_stacks_size());
  for (const v1::GraphNodeStack& g : chunk.graph_node_stacks()) {
    if ((g.stack() == 0) == (g.original_node_id() == 0) || (g.stack() != 0 && !dict.has_stack(g.stack()))) {
      return absl::DataLossError(absl::StrCat("corrupt trace: graph node ", g.node_id(),
                                              " needs exactly one of a defined call stack and an original node"));
    }
    if (g.thread() > dict.thread_count()) {
      return absl::DataLossError(absl::StrCat("corrupt trace: graph node ", g.node_id(), " names undefined thread ",
                                              g.thread()));
    }
    out->graph_nodes.push_back({g.node_id(), g.stack(), g.original_node_id(), g.created_ns(), g.thread()});
  }
  out->windows.assign(chunk.windows().begin(), chunk.windows().end());
  if (chunk.has_stats()) out->stats = chunk.stats();
  return absl::OkStatus();
}

TraceReader::~TraceReader() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  // Every error names the path once, first, so that callers add nothing.
  struct stat file;
  if (::stat(path.c_str(), &file) == 0 && S_ISDIR(file.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a directory, not a trace file"));
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
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
