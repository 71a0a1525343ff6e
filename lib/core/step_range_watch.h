// Flight mode's NVTX step trigger: watches the ranges of one name and reports each that lasted
// longer than a threshold, as a slow Session::MarkStep would be.
//
// NVTX ranges reach the collector as a start record (with the name) and an end record (with only
// the id the start had). Open ranges are remembered by id; a program that starts ranges and never
// ends them cannot grow the memory past kMaxOpenRanges (the oldest are forgotten first).
#ifndef CUSCOPE_LIB_CORE_STEP_RANGE_WATCH_H_
#define CUSCOPE_LIB_CORE_STEP_RANGE_WATCH_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "lib/core/records.h"

namespace cuscope::core {

class StepRangeWatch {
 public:
  static constexpr size_t kMaxOpenRanges = 4096;

  StepRangeWatch(std::string name, uint64_t threshold_ns) : name_(std::move(name)), threshold_ns_(threshold_ns) {}

  // The range's length when `a` ends a watched range that took longer than the threshold.
  std::optional<uint64_t> Observe(const NvtxActivity& a);

  const std::string& name() const { return name_; }
  uint64_t threshold_ns() const { return threshold_ns_; }
  size_t open_ranges() const { return open_.size(); }

 private:
  const std::string name_;
  const uint64_t threshold_ns_;
  absl::flat_hash_map<uint64_t, uint64_t> open_;  // id -> start time
  std::deque<uint64_t> order_;                    // ids, oldest first (some may have ended)
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_STEP_RANGE_WATCH_H_
