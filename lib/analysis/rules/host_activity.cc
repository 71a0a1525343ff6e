// Shared by the rules that explain idle GPU time by what the host was doing.
#include <algorithm>

#include "lib/analysis/rules/rules.h"
#include "lib/intervals/claim_in_order.h"

namespace cuscope::analysis {

HostActivity::HostActivity(const Timeline& timeline) : timeline_(timeline) {
  const std::vector<core::ApiCallRow>& calls = timeline.trace().api_calls;
  const auto by_start = [&calls](uint32_t a, uint32_t b) { return calls[a].start < calls[b].start; };
  bool sorted = true;
  for (size_t i = 1; i < calls.size() && sorted; ++i) sorted = calls[i - 1].start <= calls[i].start;
  if (!sorted) {
    order_.resize(calls.size());
    for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(), by_start);
  }
  Rewind();
}

void HostActivity::Rewind() {
  next_ = 0;
  reach_.fill(0);
  categories_.Reset();
}

const core::ApiCallRow& HostActivity::Call(size_t i) const {
  const std::vector<core::ApiCallRow>& calls = timeline_.trace().api_calls;
  return order_.empty() ? calls[i] : calls[order_[i]];
}

int HostActivity::CategoryOf(const core::ApiCallRow& call) {
  return static_cast<int>(categories_.Of(call.thread, timeline_.Traits(call)));
}

std::array<uint64_t, core::kApiCategoryCount> HostActivity::Breakdown(Interval window) {
  std::array<uint64_t, core::kApiCategoryCount> out{};
  const size_t count = timeline_.trace().api_calls.size();
  // Calls that began before the window: only how far each category reaches matters.
  for (; next_ < count && Call(next_).start < window.begin; ++next_) {
    const core::ApiCallRow& call = Call(next_);
    uint64_t& reach = reach_[CategoryOf(call)];
    reach = std::max(reach, call.end);
  }
  if (window.empty()) return out;
  pieces_.clear();
  for (int c = 0; c < core::kApiCategoryCount; ++c) {
    if (reach_[c] > window.begin) pieces_.push_back(Piece{window.begin, std::min(reach_[c], window.end), c});
  }
  // Calls that begin inside the window.
  for (; next_ < count && Call(next_).start < window.end; ++next_) {
    const core::ApiCallRow& call = Call(next_);
    const int c = CategoryOf(call);
    reach_[c] = std::max(reach_[c], call.end);
    if (call.end > call.start) pieces_.push_back(Piece{call.start, std::min(call.end, window.end), c});
  }
  if (pieces_.empty()) return out;
  if (pieces_.size() == 1) {
    out[pieces_[0].category] = pieces_[0].end - pieces_[0].begin;
    return out;
  }
  // Pieces are in start order within each category: each category's union is built in one pass.
  for (IntervalSet& set : by_category_) set.clear();
  for (const Piece& p : pieces_) {
    IntervalSet& merged = by_category_[p.category];
    if (!merged.empty() && p.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, p.end);
    } else if (p.end > p.begin) {
      merged.push_back({p.begin, p.end});
    }
  }
  IntervalSet unclaimed{window};
  const std::vector<IntervalSet> claimed = intervals::ClaimInOrder(unclaimed, by_category_);
  for (int c = 0; c < core::kApiCategoryCount; ++c) out[c] = TotalLength(claimed[c]);
  return out;
}

}  // namespace cuscope::analysis
