// Where the writer's chunks go, chosen once when the session starts:
//   trace mode                 the file
//   flight mode                the ring in memory (a snapshot writes it to a file)
//   monitor mode               a capture's ring while a capture runs (definitions only outside
//                              one), then the file when there is one (its trace windows)
// The writer completes each chunk (statistics, clock reference) and hands it over; it never asks
// the mode where the chunk goes.
#ifndef CUSCOPE_LIB_CUPTI_CHUNK_DESTINATIONS_H_
#define CUSCOPE_LIB_CUPTI_CHUNK_DESTINATIONS_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/core/flight_ring.h"
#include "lib/core/trace_writer.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::cupti {

class ChunkDestination {
 public:
  virtual ~ChunkDestination() = default;
  // Whether the header goes ahead of the first chunk (a file); a ring's snapshot writes it itself.
  virtual bool writes_header() const = 0;
  virtual absl::Status WriteHeader(const v1::Header& header) = 0;
  // One complete chunk, taken at `now_ns` (CUPTI's clock). True when it became part of the
  // session's output (the file, the flight ring); false when it was only learnt from. An error is
  // a failed write: the trace takes nothing more.
  virtual absl::StatusOr<bool> Take(const v1::Chunk& chunk, uint64_t now_ns) = 0;
  // The flight ring or a capture's; null for a file alone.
  virtual core::FlightRing* ring() { return nullptr; }
};

class FileDestination final : public ChunkDestination {
 public:
  explicit FileDestination(core::TraceWriter& file) : file_(file) {}
  bool writes_header() const override { return true; }
  absl::Status WriteHeader(const v1::Header& header) override { return file_.WriteHeader(header); }
  absl::StatusOr<bool> Take(const v1::Chunk& chunk, uint64_t now_ns) override;

 private:
  core::TraceWriter& file_;
};

// Flight mode: the last seconds in a bounded ring, whose size is published for `cuscope status`.
class FlightRingDestination final : public ChunkDestination {
 public:
  explicit FlightRingDestination(core::FlightRingOptions options) : ring_(options) {}
  bool writes_header() const override { return false; }
  absl::Status WriteHeader(const v1::Header&) override { return absl::OkStatus(); }
  absl::StatusOr<bool> Take(const v1::Chunk& chunk, uint64_t now_ns) override;
  core::FlightRing* ring() override { return &ring_; }

  // What the ring holds as of its latest chunk (any thread).
  uint64_t chunks() const { return chunks_.load(std::memory_order_relaxed); }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  uint64_t held_ns() const { return held_ns_.load(std::memory_order_relaxed); }

 private:
  core::FlightRing ring_;
  std::atomic<uint64_t> chunks_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> held_ns_{0};
};

// Monitor mode: chunks are made only from records inside a trace window or a capture's window. A
// capture's are kept in a ring (within the flight size) until its file is written; outside a
// capture the ring only learns their definitions, so a later capture's file defines every string
// and kernel it uses. With an output file (`file` not null) every chunk also goes there.
class MonitorDestination final : public ChunkDestination {
 public:
  MonitorDestination(uint64_t max_bytes, core::TraceWriter* file)
      : ring_(core::FlightRingOptions{.span_ns = UINT64_MAX, .max_bytes = max_bytes}), file_(file) {}
  bool writes_header() const override { return file_ != nullptr; }
  absl::Status WriteHeader(const v1::Header& header) override {
    return file_ != nullptr ? file_->WriteHeader(header) : absl::OkStatus();
  }
  absl::StatusOr<bool> Take(const v1::Chunk& chunk, uint64_t now_ns) override;
  core::FlightRing* ring() override { return &ring_; }

  // A capture's chunks are kept from now on (true), or its file was written (false: the ring is
  // emptied). Writer thread.
  void set_capturing(bool capturing);

 private:
  core::FlightRing ring_;
  core::TraceWriter* file_;
  bool capturing_ = false;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CHUNK_DESTINATIONS_H_
