#include "lib/core/flight_ring.h"

#include <utility>

#include "lib/core/trace_format.h"

namespace cuscope::core {
namespace {

template <typename T>
void AppendAll(const google::protobuf::RepeatedPtrField<T>& from, std::vector<T>* to) {
  to->insert(to->end(), from.begin(), from.end());
}

template <typename T>
void CopyFirst(const std::vector<T>& from, size_t count, google::protobuf::RepeatedPtrField<T>* to) {
  for (size_t i = 0; i < count && i < from.size(); ++i) *to->Add() = from[i];
}

}  // namespace

void FlightRing::Learn(const v1::Chunk& chunk) {
  AppendAll(chunk.strings(), &strings_);
  AppendAll(chunk.kernel_signatures(), &signatures_);
  AppendAll(chunk.api_functions(), &functions_);
  AppendAll(chunk.threads(), &threads_);
}

void FlightRing::Clear() {
  dropped_ += entries_.size();
  entries_.clear();
  bytes_ = 0;
}

void FlightRing::Add(const v1::Chunk& chunk, uint64_t time_ns) {
  Entry e;
  e.time_ns = time_ns;
  e.before = {strings_.size(), signatures_.size(), functions_.size(), threads_.size()};
  Learn(chunk);
  v1::Block block;
  // The block borrows the chunk for serialization only.
  block.unsafe_arena_set_allocated_chunk(const_cast<v1::Chunk*>(&chunk));
  auto framed = std::make_shared<std::string>();
  AppendFramedBlock(block, framed.get());
  block.unsafe_arena_release_chunk();
  bytes_ += framed->size();
  e.framed = std::move(framed);
  entries_.push_back(std::move(e));
  Evict();
}

void FlightRing::Evict() {
  const uint64_t newest = entries_.back().time_ns;
  while (entries_.size() > 1) {
    const Entry& oldest = entries_.front();
    const bool too_old = newest > oldest.time_ns && newest - oldest.time_ns > options_.span_ns;
    if (!too_old && bytes_ <= options_.max_bytes) break;
    bytes_ -= oldest.framed->size();
    entries_.pop_front();
    ++dropped_;
  }
}

FlightRing::Snapshot FlightRing::Take(uint64_t since_ns) const {
  Snapshot s;
  s.dropped_chunks = dropped_;
  auto first = entries_.begin();
  while (first != entries_.end() && first->time_ns < since_ns) ++first;
  if (first == entries_.end()) return s;
  const DefinitionCounts& need = first->before;
  CopyFirst(strings_, need.strings, s.definitions.mutable_strings());
  CopyFirst(signatures_, need.signatures, s.definitions.mutable_kernel_signatures());
  CopyFirst(functions_, need.functions, s.definitions.mutable_api_functions());
  CopyFirst(threads_, need.threads, s.definitions.mutable_threads());
  for (auto e = first; e != entries_.end(); ++e) s.chunks.push_back(e->framed);
  s.first_time_ns = first->time_ns;
  s.last_time_ns = entries_.back().time_ns;
  return s;
}

absl::Status WriteFlightSnapshot(const v1::Header& header, const FlightRing::Snapshot& snapshot, TraceWriter& writer) {
  if (auto st = writer.WriteHeader(header); !st.ok()) return st;
  if (auto st = writer.WriteChunk(snapshot.definitions); !st.ok()) return st;
  for (const auto& framed : snapshot.chunks) {
    if (auto st = writer.WriteFramedChunk(*framed); !st.ok()) return st;
  }
  return writer.Close();
}

}  // namespace cuscope::core
