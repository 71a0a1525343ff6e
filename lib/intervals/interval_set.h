// Interval algebra over half-open time spans [begin, end) in nanoseconds.
//
// An `IntervalSet` is a sorted list of disjoint, non-empty intervals; touching intervals are merged,
// so the gaps of a set are exactly the stretches where nothing in it was active. Every function here
// takes and returns sets in that canonical form.
#ifndef CUSCOPE_LIB_INTERVALS_INTERVAL_SET_H_
#define CUSCOPE_LIB_INTERVALS_INTERVAL_SET_H_

#include <cstdint>
#include <vector>

namespace cuscope::intervals {

struct Interval {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t length() const { return end > begin ? end - begin : 0; }
  bool empty() const { return end <= begin; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

using IntervalSet = std::vector<Interval>;

// Builds a set from intervals fed in non-decreasing order of `begin` without sorting: the cheap
// path for records that are already in start order.
class IntervalSetBuilder {
 public:
  void Add(Interval interval);
  void Add(uint64_t begin, uint64_t end) { Add(Interval{begin, end}); }
  // False once an interval arrived out of order; the caller then falls back to `UnionOf`.
  bool in_order() const { return in_order_; }
  IntervalSet Take() { return std::move(set_); }

 private:
  IntervalSet set_;
  bool in_order_ = true;
};

// The union of arbitrary intervals (any order, overlapping or not, empty ones ignored).
IntervalSet UnionOf(std::vector<Interval> intervals);
// The union of two sets.
IntervalSet Union(const IntervalSet& a, const IntervalSet& b);
// The time covered by both sets.
IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b);
// The time covered by `a` but not by `b`.
IntervalSet Subtract(const IntervalSet& a, const IntervalSet& b);
// The stretches of `span` that the set does not cover, in order.
IntervalSet GapsWithin(const IntervalSet& set, Interval span);

uint64_t TotalLength(const IntervalSet& set);
// How much of `window` the set covers (binary search: O(log n + intervals inside the window)).
uint64_t CoveredLength(const IntervalSet& set, Interval window);
// Whether a point in time lies inside the set (binary search).
bool Covers(const IntervalSet& set, uint64_t time);
// An operation `x` counted against `windows` (the timeline's capture windows): it ran in them when
// any of it lies inside or it starts inside (a zero-length one); then true with the length inside.
// One rule for every figure "in the window" (the baseline, the top-down).
inline bool RanInside(const IntervalSet& windows, Interval x, uint64_t* inside) {
  *inside = CoveredLength(windows, x);
  return *inside > 0 || Covers(windows, x.begin);
}
// The smallest interval holding the whole set; empty for an empty set.
Interval Hull(const IntervalSet& set);

}  // namespace cuscope::intervals

#endif  // CUSCOPE_LIB_INTERVALS_INTERVAL_SET_H_
