#include "lib/cupti/record_route.h"

#include <utility>

namespace cuscope::cupti {

RecordRoute::RecordRoute(settings::CollectionMode mode, core::ActivitySink& trace, core::ActivitySink* figures,
                         core::StepRangeWatch* step_watch, std::function<void(uint64_t)> slow_step_range)
    : trace_(trace), span_filter_(trace) {
  if (mode == settings::CollectionMode::kMonitor && figures != nullptr) {
    monitor_tee_ = std::make_unique<MonitorTee>(*figures, span_filter_);
  } else if (mode == settings::CollectionMode::kFlight && (step_watch != nullptr || figures != nullptr)) {
    flight_tee_ = std::make_unique<FlightTee>(trace, step_watch, std::move(slow_step_range), figures);
  }
}

void RecordRoute::Open(KeptSpans& list, uint64_t start_ns) {
  std::lock_guard<std::mutex> lock(spans_mu_);
  if (list.spans.size() >= list.kept) list.spans.erase(list.spans.begin());
  list.spans.push_back({start_ns, UINT64_MAX});
}

void RecordRoute::Close(KeptSpans& list, uint64_t end_ns) {
  std::lock_guard<std::mutex> lock(spans_mu_);
  // Only an open span closes (the pipeline serializes a window's edges; a second close is a no-op).
  if (!list.spans.empty() && list.spans.back().end == UINT64_MAX) list.spans.back().end = end_ns;
}

bool RecordRoute::counters_reach_trace() {
  if (monitor_tee_ == nullptr) return true;
  std::lock_guard<std::mutex> lock(spans_mu_);
  return !trace_spans_.spans.empty() && trace_spans_.spans.back().end == UINT64_MAX;
}

core::ActivitySink* RecordRoute::SinkForBuffer(bool trace_failed) {
  if (monitor_tee_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(spans_mu_);
      span_filter_.SetSpans(trace_spans_.spans);
    }
    monitor_tee_->set_trace_on(span_filter_.has_spans() && !trace_failed);
    return monitor_tee_.get();
  }
  if (trace_failed) return nullptr;
  if (filter_to_timeline_spans_.load()) {
    {
      std::lock_guard<std::mutex> lock(spans_mu_);
      span_filter_.SetSpans(timeline_spans_.spans);
    }
    return &span_filter_;
  }
  if (flight_tee_ != nullptr) return flight_tee_.get();
  return &trace_;
}

}  // namespace cuscope::cupti
