#include "lib/cupti/chunk_destinations.h"

namespace cuscope::cupti {

absl::StatusOr<bool> FileDestination::Take(const v1::Chunk& chunk, uint64_t /*now_ns*/) {
  if (auto st = file_.WriteChunk(chunk); !st.ok()) return st;
  return true;
}

absl::StatusOr<bool> FlightRingDestination::Take(const v1::Chunk& chunk, uint64_t now_ns) {
  ring_.Add(chunk, now_ns);
  chunks_.store(ring_.chunk_count(), std::memory_order_relaxed);
  bytes_.store(ring_.bytes(), std::memory_order_relaxed);
  held_ns_.store(ring_.held_ns(), std::memory_order_relaxed);
  return true;
}

absl::StatusOr<bool> MonitorDestination::Take(const v1::Chunk& chunk, uint64_t now_ns) {
  if (capturing_) {
    ring_.Add(chunk, now_ns);
  } else {
    ring_.Learn(chunk);
  }
  if (file_ == nullptr) return false;
  if (auto st = file_->WriteChunk(chunk); !st.ok()) return st;
  return true;
}

void MonitorDestination::set_capturing(bool capturing) {
  capturing_ = capturing;
  if (!capturing) ring_.Clear();
}

}  // namespace cuscope::cupti
