// Where a buffer's translated records go, composed once for the session's mode at its start.
//
//   trace mode                  the trace (the chunk builder)
//   trace mode, kinds held on   the trace through the timeline spans (records outside the capture
//                               windows are dropped, as CUPTI would not have made them)
//   monitor mode                the figures, and the trace through the trace windows' spans
//                               while one is known
//   flight mode with triggers   the trace, and the figures (idle trigger) and the step range's
//                               watch; without triggers, the trace alone
//
// After a failed write the trace takes nothing more: monitor mode's figures go on, and the other
// modes take nothing (SinkForBuffer answers null). The writer asks where to send each buffer and
// never asks the mode.
//
// Pure: records in, records out; no CUPTI.
#ifndef CUSCOPE_LIB_CUPTI_RECORD_ROUTE_H_
#define CUSCOPE_LIB_CUPTI_RECORD_ROUTE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "lib/core/records.h"
#include "lib/core/step_range_watch.h"
#include "lib/cupti/record_tees.h"
#include "lib/settings/config.h"

namespace cuscope::cupti {

class RecordRoute {
 public:
  // `figures`: monitor mode's (ModeFigures makes them for every monitor session; without them a
  // monitor route would send every record to the trace, as trace mode does), or flight mode's for
  // its idle trigger (may be null). `step_watch` (may be null) calls `slow_step_range` with a watched range's length when it
  // took longer than its threshold; flight mode only.
  RecordRoute(settings::CollectionMode mode, core::ActivitySink& trace, core::ActivitySink* figures,
              core::StepRangeWatch* step_watch, std::function<void(uint64_t)> slow_step_range);
  RecordRoute(const RecordRoute&) = delete;
  RecordRoute& operator=(const RecordRoute&) = delete;

  // Any thread. Trace mode with the activity kinds held on from the start (capture_controller.h):
  // from now on only records inside a timeline span reach the trace; spans open and close with the
  // capture windows. A program that opens more than kKeptTimelineSpans keeps the latest.
  static constexpr size_t kKeptTimelineSpans = 4096;
  void FilterToTimelineSpans() { filter_to_timeline_spans_.store(true); }
  void OpenTimelineSpan(uint64_t start_ns) { Open(timeline_spans_, start_ns); }
  void CloseTimelineSpan(uint64_t end_ns) { Close(timeline_spans_, end_ns); }
  // Any thread. Monitor mode's trace windows (and captures' windows): records reach the writer up
  // to a few flush periods late, so the latest kKeptTraceSpans stay known. A close ends the open
  // span only (a second close changes nothing).
  static constexpr size_t kKeptTraceSpans = 16;
  void OpenTraceSpan(uint64_t start_ns) { Open(trace_spans_, start_ns); }
  void CloseTraceSpan(uint64_t end_ns) { Close(trace_spans_, end_ns); }

  // Whether GPU counter samples reach the trace now: in monitor mode only while a trace window is
  // open (the figures take them all the same), in the other modes always.
  bool counters_reach_trace();

  // Writer thread, before each buffer (and each batch of timed calls): where its records go, given
  // whether the trace takes nothing more. Null: nowhere.
  core::ActivitySink* SinkForBuffer(bool trace_failed);

 private:
  // The latest `kept` spans of one kind, oldest first (spans_mu_).
  struct KeptSpans {
    size_t kept;
    std::vector<TraceSpan> spans;
  };
  void Open(KeptSpans& list, uint64_t start_ns);
  void Close(KeptSpans& list, uint64_t end_ns);  // the open span only

  core::ActivitySink& trace_;
  SpanFilter span_filter_;
  std::unique_ptr<MonitorTee> monitor_tee_;  // monitor mode
  std::unique_ptr<FlightTee> flight_tee_;    // flight mode with a trigger
  std::atomic<bool> filter_to_timeline_spans_{false};
  std::mutex spans_mu_;
  KeptSpans timeline_spans_{kKeptTimelineSpans, {}};  // spans_mu_
  KeptSpans trace_spans_{kKeptTraceSpans, {}};        // spans_mu_
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_RECORD_ROUTE_H_
