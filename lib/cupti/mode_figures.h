// Monitor and flight modes' figures: records folded into intervals as they arrive, each interval
// closed once no record can reach it any more and handed on.
//
// The session chooses once, at its start, which figures it keeps: monitor mode's (to the hook that
// feeds Prometheus and `cuscope status`, and to the trace as interval records), flight mode's for
// its idle trigger (to the trigger and the hook, never to the trace), or none. The writer thread
// then closes intervals on every turn without asking which: what differs by mode is here.
#ifndef CUSCOPE_LIB_CUPTI_MODE_FIGURES_H_
#define CUSCOPE_LIB_CUPTI_MODE_FIGURES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/chunk_builder.h"
#include "lib/core/records.h"
#include "lib/cupti/cupti_api.h"
#include "lib/monitor/figures.h"
#include "lib/monitor/idle_trigger.h"
#include "lib/monitor/interval_aggregator.h"
#include "lib/settings/config.h"

namespace cuscope::cupti {

class ModeFigures {
 public:
  // Where closed intervals go, on the writer thread. Either may be empty.
  struct Outlets {
    std::function<void(const std::vector<monitor::IntervalFigures>&)> intervals_closed;
    std::function<void(const monitor::IdleEvent&)> gpu_idle;  // flight mode's idle trigger fired
  };

  // The figures the config's mode keeps: monitor mode's; flight mode's when its idle trigger is on
  // (CUSCOPE_FLIGHT_IDLE_SHARE); null for the rest (trace mode, flight mode without the trigger).
  static std::unique_ptr<ModeFigures> ForMode(const settings::Config& config, CuptiApi& cupti, Outlets outlets);

  ModeFigures(const ModeFigures&) = delete;
  ModeFigures& operator=(const ModeFigures&) = delete;

  // The records' way in (a sink for the buffers' records, through the mode's tee).
  monitor::IntervalAggregator& aggregator() { return *aggregator_; }

  // Monitor mode's duty cycle: a recording window opens or closes at `time` (any thread). Applied
  // to the figures before intervals close and, in monitor mode, before the next buffer's records
  // (the writer applies them there; only monitor mode's duty cycle queues any).
  void QueueSampleEdge(bool open, uint64_t time, double weight);
  void ApplySampleEdges();  // writer thread

  // One GPU counter sample (writer thread). Only monitor mode's figures keep them.
  bool keeps_counters() const { return kind_ == Kind::kMonitor; }
  void AddCounter(uint32_t device, v1::CounterSource source, const std::string& name, const core::CounterPoint& p);

  // Writer thread: closes the intervals no record can reach any more (`all`: every one, at the
  // session's end), after the duty cycle's edges and, in monitor mode, the records CUPTI dropped
  // so far (`dropped_total`, counted once). Hands them to the outlets and, in monitor mode with a
  // `trace` (null: no file, or writing failed), to its next chunk. Returns whether the trace got
  // any.
  bool Close(bool all, uint64_t dropped_total, core::ChunkBuilder* trace);

 private:
  enum class Kind { kMonitor, kFlightIdleTrigger };
  ModeFigures(Kind kind, const settings::Config& config, CuptiApi& cupti, Outlets outlets);

  struct SampleEdge {
    bool open;
    uint64_t time;
    double weight;  // the program's time the window stands for, in its lengths
  };

  const Kind kind_;
  const uint64_t lag_ns_;  // how long after an interval's end its records may still arrive
  CuptiApi& cupti_;
  Outlets outlets_;
  std::unique_ptr<monitor::IntervalAggregator> aggregator_;  // writer thread
  std::unique_ptr<monitor::IdleTrigger> idle_trigger_;       // flight mode, writer thread
  uint64_t dropped_counted_ = 0;                             // of the dropped records, already in an interval
  std::mutex edges_mu_;
  std::vector<SampleEdge> sample_edges_;  // edges_mu_
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_MODE_FIGURES_H_
