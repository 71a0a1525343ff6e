// GPU utilization per device over time: the share of each time bucket during which the device
// ran a kernel, a copy or a memset (the union: two kernels at once count once), for the counter
// track of each device.
//
// Operations arrive chunk by chunk, not in time order, and a union over the whole trace would hold
// every busy interval. Instead each chunk's intervals are merged and added to the buckets, and a
// bucket is capped at 100%: operations of different chunks that overlap in time (rare: CUPTI
// hands buffers over in completion order) can count twice within that cap. Memory: one uint64 per
// bucket per device.
#ifndef CUSCOPE_LIB_EXPORT_UTILIZATION_H_
#define CUSCOPE_LIB_EXPORT_UTILIZATION_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace cuscope::exporter {

class Utilization {
 public:
  // The most buckets per device an explicit bucket width may ask for.
  static constexpr uint64_t kMaxBuckets = 10'000'000;
  // The adaptive width aims at no more than this many buckets over the trace.
  static constexpr uint64_t kTargetBuckets = 5000;

  // Buckets of `bucket_ns` from `first_ns` through `last_ns`; `bucket_ns` 0 picks an adaptive
  // width. Fails when the width would need more than kMaxBuckets buckets.
  static absl::StatusOr<Utilization> Create(uint64_t first_ns, uint64_t last_ns, uint64_t bucket_ns);

  // The smallest width of 1, 2 or 5 times a power of ten nanoseconds, at least 1 µs, of which
  // kTargetBuckets cover `span_ns`.
  static uint64_t AdaptiveBucket(uint64_t span_ns);

  // Adds one chunk's busy intervals [start, end) of one device; `intervals` is reordered.
  void Add(uint32_t device, std::vector<std::pair<uint64_t, uint64_t>>* intervals);

  struct Sample {
    uint64_t time = 0;
    double percent = 0;
  };
  // The counter samples of a device: one at the start of each bucket whose value differs from the
  // previous one (a counter holds its value until the next sample), and a 0 at the end of the span
  // when the last one is not 0.
  std::vector<Sample> Samples(uint32_t device) const;
  std::vector<uint32_t> devices() const;

  uint64_t bucket_ns() const { return bucket_ns_; }
  uint64_t bucket_count() const { return buckets_; }

 private:
  Utilization(uint64_t first_ns, uint64_t last_ns, uint64_t bucket_ns, uint64_t buckets)
      : first_(first_ns), last_(last_ns), bucket_ns_(bucket_ns), buckets_(buckets) {}
  uint64_t first_ = 0;
  uint64_t last_ = 0;
  uint64_t bucket_ns_ = 1;
  uint64_t buckets_ = 1;
  std::map<uint32_t, std::vector<uint64_t>> busy_;  // device -> busy ns per bucket
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_UTILIZATION_H_
