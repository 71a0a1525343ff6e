// The rules of the symptom table that read the timeline. Each is a pure function of the timeline
// (and the thresholds), defined in its own file, returning zero or more findings; the warning
// rules at the end return warnings about the trace instead. registry.h lists them in the order
// Analyze runs them.
#ifndef CUSCOPE_LIB_ANALYSIS_RULES_RULES_H_
#define CUSCOPE_LIB_ANALYSIS_RULES_RULES_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "lib/analysis/communication.h"
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
// kernel.internals: one finding per profiled kernel group: compute-, memory- or latency-bound,
// occupancy judged against throughput, the dominant stall, the roofline position.
std::vector<Finding> KernelInternalsRule(const Timeline& timeline, const Thresholds& thresholds);
// gpu.throttle: NVML clocks-event reasons show power or thermal slowdown while kernels ran: which
// reasons, how much kernel time they covered, the SM clock then against the highest read.
std::vector<Finding> ThrottleRule(const Timeline& timeline, const Thresholds& thresholds);
std::vector<Finding> MonitorIdleRule(const Timeline& timeline, const Thresholds& thresholds);
// comm.exposed: NCCL kernels running with no compute beside them on their device (communication.h).
std::vector<Finding> CommunicationRule(const Timeline& timeline, const Thresholds& thresholds);
// The same from the trace's communication, already built.
std::vector<Finding> CommunicationFindings(const Timeline& timeline, const Communication& comm,
                                           const Thresholds& thresholds);

// Warnings about the trace itself: the tail cut off, damage after some chunk, records dropped
// during capture, operations still running at its end, no final statistics.
std::vector<std::string> TraceHealthRule(const Timeline& timeline);
// Warnings about metric collection: replayed launches left out of the timeline, the time metric
// collection took while the timeline was recorded, devices whose kernel time is mostly replayed.
std::vector<std::string> MetricCollectionRule(const Timeline& timeline);

// How the host's API calls cover stretches of time, split by what the call was doing. Calls on
// different threads that overlap count once, for the category that explains the time best (sync
// before copy before alloc before setup before launch before any other call). A launch made while
// its thread captures a stream counts as setup.
//
// It is a sweep: windows must be asked for in order (each beginning at or after the previous
// one's end, as the gaps of one device are), and it walks the calls once in start order, keeping
// no per-call state. `Rewind` starts over for another device.
class HostActivity {
 public:
  explicit HostActivity(const Timeline& timeline);
  // Time of `window` per core::ApiCategory; the rest of the window no call covered.
  std::array<uint64_t, core::kApiCategoryCount> Breakdown(Interval window);
  void Rewind();

 private:
  struct Piece {
    uint64_t begin, end;
    int category;
  };
  const core::ApiCallRow& Call(size_t i) const;
  int CategoryOf(const core::ApiCallRow& call);

  const Timeline& timeline_;
  std::vector<uint32_t> order_;  // call indices by start; empty when the trace is already in order
  size_t next_ = 0;
  // Per category, the latest end of the calls already passed: what reaches into the next window.
  std::array<uint64_t, core::kApiCategoryCount> reach_{};
  core::CallCategories categories_;
  // Scratch, reused from window to window.
  std::vector<Piece> pieces_;
  std::array<IntervalSet, core::kApiCategoryCount> by_category_;
};

// Median of a list of values (the lower middle for an even count); 0 for an empty list. Reorders
// the values (selection, not a sort).
template <typename T>
uint64_t Median(std::vector<T>& values) {
  if (values.empty()) return 0;
  const size_t mid = (values.size() - 1) / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  return static_cast<uint64_t>(values[mid]);
}

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_RULES_RULES_H_
