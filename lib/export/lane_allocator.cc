#include "lib/export/lane_allocator.h"

#include <algorithm>

namespace cuscope::exporter {

bool LaneAllocator::Lane::TryPlace(uint64_t start, uint64_t end) {
  // Forgotten roots all end at or before the frontier; one ending exactly there was written first.
  if (start < frontier) return false;
  if (roots.empty() || start >= roots.back().end) {
    roots.push_back({start, end});
  } else {
    // Roots that end at or before `start` lie before the slice. From the first that ends after it,
    // every root that begins before `end` overlaps the slice and must lie inside it.
    auto first = std::partition_point(roots.begin(), roots.end(), [start](const Root& r) { return r.end <= start; });
    auto last = first;
    for (; last != roots.end() && last->start < end; ++last) {
      const bool inside = (last->start > start && last->end <= end) || (last->start == start && last->end == end);
      if (!inside) return false;
    }
    // A root beginning where the slice ends: its begin would sort before the slice's end, which
    // would then close it.
    if (last != roots.end() && last->start == end) return false;
    if (first == last) {
      roots.insert(first, Root{start, end});
    } else {
      *first = Root{start, end};
      roots.erase(first + 1, last);
    }
  }
  if (roots.size() > kMaxRoots) {
    const size_t drop = roots.size() / 2;
    frontier = std::max(frontier, roots[drop - 1].end);
    roots.erase(roots.begin(), roots.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  return true;
}

int LaneAllocator::Place(uint64_t start, uint64_t end) {
  if (end <= start) return 0;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i].TryPlace(start, end)) return static_cast<int>(i);
  }
  if (lanes_.size() >= kMaxLanes) return -1;
  lanes_.emplace_back().TryPlace(start, end);
  return static_cast<int>(lanes_.size() - 1);
}

}  // namespace cuscope::exporter
