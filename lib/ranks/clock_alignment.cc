#include "lib/ranks/clock_alignment.h"

#include <algorithm>

namespace cuscope::ranks {

ClockAlignment ClockAlignment::FromTrace(const v1::Header& header, const std::vector<v1::ClockReference>& references) {
  ClockAlignment a;
  const v1::Session& s = header.session();
  const auto add = [&a](uint64_t cupti, uint64_t wall) {
    if (cupti != 0 && wall != 0) a.points_.emplace_back(cupti, static_cast<int64_t>(wall - cupti));
  };
  add(s.clock_ref_cupti_ns(), s.clock_ref_realtime_ns());
  for (const v1::ClockReference& r : references) add(r.cupti_ns(), r.realtime_ns());
  std::sort(a.points_.begin(), a.points_.end());
  a.points_.erase(std::unique(a.points_.begin(), a.points_.end(),
                              [](const auto& x, const auto& y) { return x.first == y.first; }),
                  a.points_.end());
  return a;
}

int64_t ClockAlignment::OffsetAt(uint64_t cupti_ns) const {
  if (points_.empty()) return 0;
  if (cupti_ns <= points_.front().first) return points_.front().second;
  if (cupti_ns >= points_.back().first) return points_.back().second;
  const auto next = std::upper_bound(points_.begin(), points_.end(), cupti_ns,
                                     [](uint64_t t, const auto& p) { return t < p.first; });
  const auto prev = std::prev(next);
  const double share = static_cast<double>(cupti_ns - prev->first) / static_cast<double>(next->first - prev->first);
  const double offset = static_cast<double>(prev->second) +
                        share * (static_cast<double>(next->second) - static_cast<double>(prev->second));
  // Between two int64 values, but a double's rounding could still step out of the range.
  return static_cast<int64_t>(std::clamp(offset, -9.2e18, 9.2e18));
}

int64_t ClockAlignment::drift_ns() const {
  if (points_.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(points_.begin(), points_.end(),
                                            [](const auto& x, const auto& y) { return x.second < y.second; });
  return static_cast<int64_t>(static_cast<uint64_t>(hi->second) - static_cast<uint64_t>(lo->second));
}

}  // namespace cuscope::ranks
