#include "lib/core/step_range_watch.h"

namespace cuscope::core {

std::optional<uint64_t> StepRangeWatch::Observe(const NvtxActivity& a) {
  if (a.kind == v1::NVTX_KIND_RANGE_START) {
    if (a.name != name_) return std::nullopt;
    open_[a.id] = a.time;
    order_.push_back(a.id);
    while (open_.size() > kMaxOpenRanges || order_.size() > 2 * kMaxOpenRanges) {
      open_.erase(order_.front());  // forgets the oldest; an id already ended erases nothing
      order_.pop_front();
    }
    return std::nullopt;
  }
  if (a.kind != v1::NVTX_KIND_RANGE_END) return std::nullopt;
  auto it = open_.find(a.id);
  if (it == open_.end()) return std::nullopt;
  const uint64_t start = it->second;
  open_.erase(it);
  if (a.time < start) return std::nullopt;  // clocks out of order: no length to judge
  const uint64_t length = a.time - start;
  if (length <= threshold_ns_) return std::nullopt;
  return length;
}

}  // namespace cuscope::core
