#include "lib/core/trace.h"

#include <iterator>
#include <memory>

#include "lib/core/trace_reader.h"

namespace cuscope::core {
namespace {

template <typename T>
void MoveAppend(std::vector<T>& from, std::vector<T>& to) {
  if (to.empty()) {
    to.swap(from);
  } else {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
  from.clear();
}

Trace ReadAll(TraceReader& reader) {
  Trace t;
  DecodedChunk c;
  while (true) {
    auto more = reader.Next(&c);
    if (!more.ok()) {
      t.corruption = more.status();
      break;
    }
    if (!*more) break;
    MoveAppend(c.kernels, t.kernels);
    MoveAppend(c.api_calls, t.api_calls);
    MoveAppend(c.memcpys, t.memcpys);
    MoveAppend(c.memsets, t.memsets);
    MoveAppend(c.syncs, t.syncs);
    MoveAppend(c.nvtx, t.nvtx);
    MoveAppend(c.memory_ops, t.memory_ops);
    MoveAppend(c.overheads, t.overheads);
    MoveAppend(c.metrics, t.metrics);
    MoveAppend(c.windows, t.windows);
    if (c.stats) t.stats = c.stats;
  }
  t.header = reader.header();
  t.dict = reader.dictionary();
  t.chunks = reader.chunks_read();
  t.bytes_read = reader.bytes_read();
  t.tail_bytes_dropped = reader.tail_bytes_dropped();
  return t;
}

}  // namespace

uint64_t Trace::record_count() const {
  return kernels.size() + api_calls.size() + memcpys.size() + memsets.size() + syncs.size() + nvtx.size() +
         memory_ops.size() + overheads.size() + metrics.size();
}

absl::StatusOr<Trace> LoadTrace(const std::string& path) {
  auto reader = TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  return ReadAll(**reader);
}

absl::StatusOr<Trace> LoadTraceFromBytes(std::string bytes) {
  auto reader = TraceReader::FromBytes(std::move(bytes));
  if (!reader.ok()) return reader.status();
  return ReadAll(**reader);
}

}  // namespace cuscope::core
