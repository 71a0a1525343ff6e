// Flight mode's GPU-idle trigger: from the always-on figures (closed intervals, oldest first),
// says when a device sat idle more than a share of the last seconds.
//
// A device is judged only over a full window in which it took part in every interval (a device
// appears with its first activity; a program still starting is not judged). After a trigger the
// window starts afresh: the next one needs a whole window of new intervals, so an idle stretch
// that goes on starts one snapshot per window, not one per interval.
#ifndef CUSCOPE_LIB_MONITOR_IDLE_TRIGGER_H_
#define CUSCOPE_LIB_MONITOR_IDLE_TRIGGER_H_

#include <cstdint>
#include <deque>
#include <optional>

#include "lib/monitor/figures.h"

namespace cuscope::monitor {

struct IdleTriggerOptions {
  double idle_share = 0.5;           // above this share of the window (0..1)
  uint64_t window_ns = 10'000'000'000ull;
};

struct IdleEvent {
  uint32_t device = 0;
  double idle_share = 0;
  uint64_t window_ns = 0;  // the span judged, from the first interval's start to the last's end
};

class IdleTrigger {
 public:
  explicit IdleTrigger(IdleTriggerOptions options) : options_(options) {}

  // Adds one closed interval; the device idle the most, when one is over the share.
  std::optional<IdleEvent> Add(const IntervalFigures& interval);

 private:
  IdleTriggerOptions options_;
  std::deque<IntervalFigures> window_;  // the devices' figures only are read
};

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_IDLE_TRIGGER_H_
