// Shared by the rules that explain idle GPU time by what the host was doing.
#include <algorithm>

#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {

HostActivity::HostActivity(const Timeline& timeline) {
  std::array<std::vector<Interval>, kApiCategoryCount> raw;
  for (const core::ApiCallRow& call : timeline.trace().api_calls) {
    raw[static_cast<int>(timeline.Traits(call).category)].push_back({call.start, call.end});
  }
  IntervalSet covered;
  for (int c = 0; c < kApiCategoryCount; ++c) {
    IntervalSet all = UnionOf(std::move(raw[c]));
    exclusive_[c] = Subtract(all, covered);
    covered = Union(covered, all);
  }
}

std::array<uint64_t, kApiCategoryCount> HostActivity::Breakdown(Interval window) const {
  std::array<uint64_t, kApiCategoryCount> out{};
  for (int c = 0; c < kApiCategoryCount; ++c) out[c] = CoveredLength(exclusive_[c], window);
  return out;
}

uint64_t Median(std::vector<uint64_t> values) {
  if (values.empty()) return 0;
  const size_t mid = (values.size() - 1) / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

}  // namespace cuscope::analysis
