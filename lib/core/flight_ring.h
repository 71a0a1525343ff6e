// The flight recorder's memory: the trace's latest chunks, kept framed as they would be written,
// within a span of time and a byte budget, so that a snapshot can write the last seconds at any
// moment without having kept the rest.
//
// Chunks refer to interned definitions (strings, kernel signatures, API functions, threads) by
// file-wide ids, each defined once, in the chunk that first used it. A chunk dropped from the ring
// takes its definitions with it, so the ring keeps every definition it has seen (a few bytes per
// distinct name) and a snapshot begins with a chunk that defines, in order, every id the oldest
// kept chunk may refer to but does not define itself.
//
// Not thread-safe: one thread adds (the writer) and takes snapshots.
#ifndef CUSCOPE_LIB_CORE_FLIGHT_RING_H_
#define CUSCOPE_LIB_CORE_FLIGHT_RING_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/trace_writer.h"

namespace cuscope::core {

struct FlightRingOptions {
  // A chunk taken longer than this before the newest is dropped.
  uint64_t span_ns = 30'000'000'000ull;
  // The framed chunks together stay within this (the newest chunk is kept even when larger).
  uint64_t max_bytes = 256ull << 20;
};

class FlightRing {
 public:
  explicit FlightRing(FlightRingOptions options) : options_(options) {}

  // Adds a chunk taken at `time_ns`, then drops the oldest chunks out of the span or the budget.
  void Add(const v1::Chunk& chunk, uint64_t time_ns);
  // Keeps only the chunk's definitions: a ring that holds chunks only while a capture runs (monitor
  // mode) still learns every definition written meanwhile, so its captures resolve every name.
  void Learn(const v1::Chunk& chunk);
  // Drops every kept chunk; the definitions stay.
  void Clear();

  struct Snapshot {
    // The definitions the first kept chunk needs from dropped ones; written first (ids in order).
    v1::Chunk definitions;
    // Each a framed block, oldest first, shared with the ring (never changed once added).
    std::vector<std::shared_ptr<const std::string>> chunks;
    uint64_t first_time_ns = 0;  // when the oldest kept chunk was taken (0 when none)
    uint64_t last_time_ns = 0;
    uint64_t dropped_chunks = 0;  // dropped from the ring before this snapshot, ever
  };
  // What the ring holds now, from the first chunk taken at or after `since_ns` on. Cheap: the
  // chunks are shared, only the definitions are copied.
  Snapshot Take(uint64_t since_ns = 0) const;

  size_t chunk_count() const { return entries_.size(); }
  // From the oldest kept chunk to the newest.
  uint64_t held_ns() const { return entries_.empty() ? 0 : entries_.back().time_ns - entries_.front().time_ns; }
  uint64_t bytes() const { return bytes_; }

 private:
  struct DefinitionCounts {
    size_t strings = 0, signatures = 0, functions = 0, threads = 0;
  };
  struct Entry {
    std::shared_ptr<const std::string> framed;
    uint64_t time_ns = 0;
    DefinitionCounts before;  // definitions known before this chunk
  };
  void Evict();

  FlightRingOptions options_;
  std::deque<Entry> entries_;
  uint64_t bytes_ = 0;
  uint64_t dropped_ = 0;
  // Every definition seen, in id order.
  std::vector<v1::InternedString> strings_;
  std::vector<v1::KernelSignature> signatures_;
  std::vector<v1::ApiFunction> functions_;
  std::vector<v1::HostThread> threads_;
};

// Writes a snapshot as a trace file: the header, the definitions chunk, then the kept chunks.
absl::Status WriteFlightSnapshot(const v1::Header& header, const FlightRing::Snapshot& snapshot, TraceWriter& writer);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_FLIGHT_RING_H_
