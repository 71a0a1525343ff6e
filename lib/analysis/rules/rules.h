// The rules of the symptom table that read the timeline. Each is a pure function of the timeline
// and the thresholds, defined in its own file, returning zero or more findings.
#ifndef CUSCOPE_LIB_ANALYSIS_RULES_RULES_H_
#define CUSCOPE_LIB_ANALYSIS_RULES_RULES_H_

#include <array>
#include <vector>

#include "lib/analysis/finding.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

// gpu.idle: device utilization over its active span and in time buckets; every idle gap
// attributed to what the host was doing (sync, copy, alloc, launch, or host-bound).
std::vector<Finding> GpuIdleRule(const Timeline& timeline, const Thresholds& thresholds);
// launch.overhead: many short kernels separated by gaps comparable to their run time.
std::vector<Finding> LaunchOverheadRule(const Timeline& timeline, const Thresholds& thresholds);
// sync.points: host threads parked in synchronization or synchronous copies.
std::vector<Finding> SyncPointsRule(const Timeline& timeline, const Thresholds& thresholds);
// copies.serialized, copies.pageable_async, copies.sync, memset.sync.
std::vector<Finding> CopiesRule(const Timeline& timeline, const Thresholds& thresholds);
// streams.serialized, streams.event_wait.
std::vector<Finding> StreamsRule(const Timeline& timeline, const Thresholds& thresholds);
// hot.kernels: the top kernels by share of GPU kernel time.
std::vector<Finding> HotKernelsRule(const Timeline& timeline, const Thresholds& thresholds);

// How the host's API calls cover a stretch of time, split by what the call was doing. Calls on
// different threads that overlap count once, for the category that explains the time best (sync
// before copy before alloc before launch before any other call).
class HostActivity {
 public:
  explicit HostActivity(const Timeline& timeline);
  // Time of `window` per ApiCategory; the rest of the window no call covered.
  std::array<uint64_t, kApiCategoryCount> Breakdown(Interval window) const;

 private:
  std::array<IntervalSet, kApiCategoryCount> exclusive_;
};

// Median of a list of values (the lower middle for an even count); 0 for an empty list.
uint64_t Median(std::vector<uint64_t> values);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_RULES_RULES_H_
