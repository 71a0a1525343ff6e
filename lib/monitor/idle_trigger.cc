#include "lib/monitor/idle_trigger.h"

#include <map>
#include <utility>

namespace cuscope::monitor {

std::optional<IdleEvent> IdleTrigger::Add(const IntervalFigures& interval) {
  IntervalFigures kept;  // what the judgement needs: the span and each device's busy and idle
  kept.start_ns = interval.start_ns;
  kept.end_ns = interval.end_ns;
  for (const DeviceFigures& d : interval.devices) {
    DeviceFigures& k = kept.devices.emplace_back();
    k.device = d.device;
    k.busy_ns = d.busy_ns;
    k.idle_ns = d.idle_ns;
  }
  window_.push_back(std::move(kept));
  const uint64_t end = window_.back().end_ns;
  while (window_.size() > 1 && end - window_[1].start_ns >= options_.window_ns) window_.pop_front();
  const uint64_t span = end - window_.front().start_ns;
  if (span < options_.window_ns) return std::nullopt;

  struct Sums {
    uint64_t busy = 0, idle = 0;
    size_t intervals = 0;
  };
  std::map<uint32_t, Sums> devices;
  for (const IntervalFigures& f : window_) {
    for (const DeviceFigures& d : f.devices) {
      Sums& s = devices[d.device];
      s.busy += d.busy_ns;
      s.idle += d.idle_ns;
      ++s.intervals;
    }
  }
  std::optional<IdleEvent> worst;
  for (const auto& [device, s] : devices) {
    if (s.intervals < window_.size() || s.busy + s.idle == 0) continue;
    const double share = static_cast<double>(s.idle) / static_cast<double>(s.busy + s.idle);
    if (share > options_.idle_share && (!worst || share > worst->idle_share)) {
      worst = IdleEvent{device, share, span};
    }
  }
  if (worst) window_.clear();  // the next judgement needs a whole window of new intervals
  return worst;
}

}  // namespace cuscope::monitor
