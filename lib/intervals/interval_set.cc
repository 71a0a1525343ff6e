#include "lib/intervals/interval_set.h"

#include <algorithm>

namespace cuscope::intervals {

void IntervalSetBuilder::Add(Interval interval) {
  if (interval.empty()) return;
  if (set_.empty()) {
    set_.push_back(interval);
    return;
  }
  Interval& last = set_.back();
  if (interval.begin < last.begin) in_order_ = false;
  if (interval.begin <= last.end) {
    last.end = std::max(last.end, interval.end);
  } else {
    set_.push_back(interval);
  }
}

IntervalSet UnionOf(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& x, const Interval& y) { return x.begin < y.begin; });
  // Merge in place: the input vector becomes the output, so no second allocation.
  size_t out = 0;
  for (const Interval& in : intervals) {
    if (in.empty()) continue;
    if (out > 0 && in.begin <= intervals[out - 1].end) {
      intervals[out - 1].end = std::max(intervals[out - 1].end, in.end);
    } else {
      intervals[out++] = in;
    }
  }
  intervals.resize(out);
  return intervals;
}

IntervalSet Union(const IntervalSet& a, const IntervalSet& b) {
  IntervalSetBuilder builder;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].begin <= b[j].begin)) {
      builder.Add(a[i++]);
    } else {
      builder.Add(b[j++]);
    }
  }
  return builder.Take();
}

IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const uint64_t begin = std::max(a[i].begin, b[j].begin);
    const uint64_t end = std::min(a[i].end, b[j].end);
    if (begin < end) out.push_back({begin, end});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

IntervalSet Subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t j = 0;
  for (const Interval& x : a) {
    uint64_t cursor = x.begin;
    while (j < b.size() && b[j].end <= cursor) ++j;
    size_t k = j;
    while (k < b.size() && b[k].begin < x.end) {
      if (b[k].begin > cursor) out.push_back({cursor, b[k].begin});
      cursor = std::max(cursor, b[k].end);
      if (b[k].end > x.end) break;
      ++k;
    }
    if (cursor < x.end) out.push_back({cursor, x.end});
  }
  return out;
}

IntervalSet GapsWithin(const IntervalSet& set, Interval span) {
  if (span.empty()) return {};
  return Subtract(IntervalSet{span}, set);
}

uint64_t TotalLength(const IntervalSet& set) {
  uint64_t total = 0;
  for (const Interval& x : set) total += x.length();
  return total;
}

uint64_t CoveredLength(const IntervalSet& set, Interval window) {
  if (window.empty()) return 0;
  // First interval that ends after the window begins.
  auto it = std::upper_bound(set.begin(), set.end(), window.begin,
                             [](uint64_t t, const Interval& x) { return t < x.end; });
  uint64_t covered = 0;
  for (; it != set.end() && it->begin < window.end; ++it) {
    covered += std::min(it->end, window.end) - std::max(it->begin, window.begin);
  }
  return covered;
}

bool Covers(const IntervalSet& set, uint64_t time) {
  auto it = std::upper_bound(set.begin(), set.end(), time, [](uint64_t t, const Interval& x) { return t < x.end; });
  return it != set.end() && it->begin <= time;
}

Interval Hull(const IntervalSet& set) {
  if (set.empty()) return {};
  return {set.front().begin, set.back().end};
}

}  // namespace cuscope::intervals
