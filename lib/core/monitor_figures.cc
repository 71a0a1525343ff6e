#include "lib/core/monitor_figures.h"

namespace cuscope::core {

void RequestHistogram::Add(double seconds) {
  size_t bucket = 0;
  while (bucket < kRequestBucketSeconds.size() && seconds > kRequestBucketSeconds[bucket]) ++bucket;
  ++counts[bucket];
  sum_seconds += seconds;
}

void RequestHistogram::Merge(const RequestHistogram& other) {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
  sum_seconds += other.sum_seconds;
}

uint64_t RequestHistogram::count() const {
  uint64_t n = 0;
  for (uint64_t c : counts) n += c;
  return n;
}

}  // namespace cuscope::core
