#include "lib/cupti/record_tees.h"

#include <algorithm>
#include <iterator>

namespace cuscope::cupti {

// Spans open one after another on CUPTI's clock, each after the last one closed, so only the last
// span starting at or before `t` can hold it (a binary search: a program may open thousands).
bool InSpans(uint64_t t, const std::vector<TraceSpan>& spans) {
  auto after = std::upper_bound(spans.begin(), spans.end(), t,
                                [](uint64_t time, const TraceSpan& w) { return time < w.start; });
  if (after == spans.begin()) return false;
  return t <= std::prev(after)->end;
}

void SpanFilter::Add(const core::NvtxActivity& a) {
  if (!InSpans(a.time, spans_)) return;
  trace_.Add(a);
  // CUPTI hands a marker's payload over in a record of its own, after the marker's.
  if (kept_markers_.size() >= kMaxMarkersAwaitingPayload) kept_markers_.clear();
  kept_markers_.insert(a.id);
}

void SpanFilter::Add(const core::NvtxPayloadRecord& p) {
  if (kept_markers_.erase(p.id) > 0) trace_.Add(p);
}

void FlightTee::Add(const core::NvtxActivity& a) {
  Both(a);
  if (watch_ == nullptr) return;
  if (auto length = watch_->Observe(a); length.has_value() && slow_) slow_(*length);
}

}  // namespace cuscope::cupti
