// Shared by the rules that explain idle GPU time by what the host was doing.
#include <algorithm>

#include "lib/analysis/rules/rules.h"

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
  capturing_.assign(timeline_.trace().dict.thread_count() + 1, 0);
}

const core::ApiCallRow& HostActivity::Call(size_t i) const {
  const std::vector<core::ApiCallRow>& calls = timeline_.trace().api_calls;
  return order_.empty() ? calls[i] : calls[order_[i]];
}

int HostActivity::CategoryOf(const core::ApiCallRow& call) {
  const core::ApiTraits& traits = timeline_.Traits(call);
  if (call.thread >= capturing_.size()) capturing_.resize(call.thread + 1, 0);
  uint8_t& capturing = capturing_[call.thread];
  if (traits.capture_begin) capturing = 1;
  if (traits.capture_end) capturing = 0;
  if (capturing && traits.category == core::ApiCategory::kLaunch) return static_cast<int>(core::ApiCategory::kSetup);
  return static_cast<int>(traits.category);
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
  // Pieces are in start order within each category. Claim time category by category, in
  // precedence order, each taking only what the ones before it left.
  covered_.clear();
  for (int c = 0; c < core::kApiCategoryCount; ++c) {
    merged_.clear();
    for (const Piece& p : pieces_) {
      if (p.category != c) continue;
      if (!merged_.empty() && p.begin <= merged_.back().end) {
        merged_.back().end = std::max(merged_.back().end, p.end);
      } else {
        merged_.push_back({p.begin, p.end});
      }
    }
    if (merged_.empty()) continue;
    out[c] = TotalLength(merged_) - TotalLength(Intersect(merged_, covered_));
    next_covered_ = Union(covered_, merged_);
    covered_.swap(next_covered_);
  }
  return out;
}

}  // namespace cuscope::analysis
