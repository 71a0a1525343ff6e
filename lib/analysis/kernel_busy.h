// The stretches of time in which a device ran at least one kernel of the timeline (copies and
// memsets left out: they do not occupy the SMs), walked in time order without building the set:
// a trace of millions of short kernels has about as many stretches, and the baseline, the GPU
// counters and the throttle rule each need them once.
#ifndef CUSCOPE_LIB_ANALYSIS_KERNEL_BUSY_H_
#define CUSCOPE_LIB_ANALYSIS_KERNEL_BUSY_H_

#include <algorithm>

#include "lib/analysis/interval_names.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

// Calls `visit(Interval)` once per stretch of the union of the device's kernels, earliest first.
// Touching kernels form one stretch, as in an IntervalSet.
template <typename Visit>
void ForEachKernelBusyStretch(const Timeline& timeline, const DeviceTimeline& device, Visit&& visit) {
  Interval current;
  bool open = false;
  for (OpRef op : device.ops) {
    if (op.kind() != OpKind::kKernel) continue;
    const Interval x = timeline.OpInterval(op);
    if (x.empty()) continue;
    if (open && x.begin <= current.end) {
      current.end = std::max(current.end, x.end);
      continue;
    }
    if (open) visit(current);
    current = x;
    open = true;
  }
  if (open) visit(current);
}

// Walks an IntervalSet alongside a stream of intervals that arrive in time order, handing back the
// pieces of each interval the set covers. One cursor, so the whole walk is linear.
class OrderedClipper {
 public:
  explicit OrderedClipper(const IntervalSet& set) : set_(set) {}
  // Calls `piece(Interval)` for each part of `x` inside the set. `x` must not begin before the
  // previous interval handed in.
  template <typename Piece>
  void Clip(Interval x, Piece&& piece) {
    while (next_ < set_.size() && set_[next_].end <= x.begin) ++next_;
    for (size_t i = next_; i < set_.size() && set_[i].begin < x.end; ++i) {
      const Interval p{std::max(x.begin, set_[i].begin), std::min(x.end, set_[i].end)};
      if (!p.empty()) piece(p);
    }
  }

 private:
  const IntervalSet& set_;
  size_t next_ = 0;
};

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_KERNEL_BUSY_H_
