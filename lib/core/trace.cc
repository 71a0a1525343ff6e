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
    t.AppendRows(c);
    MoveAppend(c.windows, t.windows);
    if (c.top_down) t.top_down.push_back(std::move(*c.top_down));
    MoveAppend(c.monitor_intervals, t.monitor_intervals);
    if (c.stats) t.stats = c.stats;
    if (c.clock_reference) t.clock_references.push_back(*c.clock_reference);
  }
  t.header = reader.header();
  t.dict = reader.dictionary();
  t.chunks = reader.chunks_read();
  t.bytes_read = reader.bytes_read();
  t.tail_bytes_dropped = reader.tail_bytes_dropped();
  return t;
}

}  // namespace

void RecordRows::ClearRows() {
  kernels.clear();
  api_calls.clear();
  memcpys.clear();
  memsets.clear();
  syncs.clear();
  nvtx.clear();
  memory_ops.clear();
  overheads.clear();
  metrics.clear();
  counter_samples.clear();
  launch_stacks.clear();
  graph_nodes.clear();
  nvtx_payloads.clear();
  request_scopes.clear();
}

void RecordRows::AppendRows(RecordRows& other) {
  MoveAppend(other.kernels, kernels);
  MoveAppend(other.api_calls, api_calls);
  MoveAppend(other.memcpys, memcpys);
  MoveAppend(other.memsets, memsets);
  MoveAppend(other.syncs, syncs);
  MoveAppend(other.nvtx, nvtx);
  MoveAppend(other.memory_ops, memory_ops);
  MoveAppend(other.overheads, overheads);
  MoveAppend(other.metrics, metrics);
  MoveAppend(other.counter_samples, counter_samples);
  MoveAppend(other.launch_stacks, launch_stacks);
  MoveAppend(other.graph_nodes, graph_nodes);
  MoveAppend(other.nvtx_payloads, nvtx_payloads);
  MoveAppend(other.request_scopes, request_scopes);
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
