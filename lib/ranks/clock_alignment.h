// A trace's CUPTI timestamps on the wall clock, so that traces of several processes line up on
// one axis.
//
// Each trace holds pairs of (CUPTI time, CLOCK_REALTIME) read together: one in its header, one
// every 10 s in its chunks (v1::ClockReference). CUPTI's clock on Linux follows the realtime clock,
// so on one host (same boot id) the offset is about zero and traces line up to the reading's
// uncertainty; on several hosts they line up within the hosts' clock synchronization (NTP: about a
// millisecond; PTP: microseconds). Between two pairs the offset is interpolated, so that a drift
// between the clocks over a long run is followed; before the first and after the last, the nearest
// holds. A trace without pairs (written before they existed) keeps its own times.
#ifndef CUSCOPE_LIB_RANKS_CLOCK_ALIGNMENT_H_
#define CUSCOPE_LIB_RANKS_CLOCK_ALIGNMENT_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "cuscope/v1/trace.pb.h"

namespace cuscope::ranks {

class ClockAlignment {
 public:
  ClockAlignment() = default;
  static ClockAlignment FromTrace(const v1::Header& header, const std::vector<v1::ClockReference>& references);

  // `cupti_ns` on the wall clock (ns since the epoch).
  // (Modular arithmetic: a trace's values are input, and no reading of them may overflow.)
  uint64_t ToWall(uint64_t cupti_ns) const { return cupti_ns + static_cast<uint64_t>(OffsetAt(cupti_ns)); }
  // Wall clock minus CUPTI time at `cupti_ns`.
  int64_t OffsetAt(uint64_t cupti_ns) const;
  // Whether the trace had a reference; false: its times are kept as they are.
  bool known() const { return !points_.empty(); }
  // The largest change of the offset over the run (ns): the drift followed.
  int64_t drift_ns() const;

 private:
  std::vector<std::pair<uint64_t, int64_t>> points_;  // (CUPTI time, offset), by CUPTI time
};

}  // namespace cuscope::ranks

#endif  // CUSCOPE_LIB_RANKS_CLOCK_ALIGNMENT_H_
