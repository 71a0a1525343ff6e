// A correlation id CUPTI gave to most of a trace's kernels instead of one per launch (seen on the
// H200 when a window opened late with a profiler in it), and what a replayed launch is once such an
// id is known. Shared by the analyzer's timeline and the exporter, so both place the same kernels.
//
// "Most": at least kMinKernels kernels launched outside CUDA graphs (a graph's kernels share their
// graph launch's id by design), more than half of those with an id. Found in two passes without a
// map of every id (a trace holds millions): a majority vote (Boyer-Moore) names the only candidate,
// a count confirms it.
#ifndef CUSCOPE_LIB_CORE_STUCK_CORRELATION_H_
#define CUSCOPE_LIB_CORE_STUCK_CORRELATION_H_

#include <cstdint>
#include <optional>

#include "lib/core/records.h"

namespace cuscope::core {

struct StuckCorrelation {
  uint64_t id = 0;
  uint64_t kernels = 0;          // kernels with this id
  uint64_t kernels_with_id = 0;  // kernels outside graphs with any id
};

class StuckCorrelationVote {
 public:
  static constexpr uint64_t kMinKernels = 100;

  // Whether a kernel takes part: an id, and not a graph's.
  static bool Counted(const KernelRow& k) { return k.correlation_id != 0 && k.graph_id == 0; }

  // First pass: every kernel.
  void Vote(const KernelRow& k);
  // Whether a second pass is needed: a candidate survived the vote.
  bool HasCandidate() const { return votes_ > 0; }
  // Second pass: every kernel again.
  void Count(const KernelRow& k);
  // After both passes.
  std::optional<StuckCorrelation> Result() const;

 private:
  uint64_t candidate_ = 0;
  uint64_t votes_ = 0;
  StuckCorrelation counted_;
};

// Whether a kernel row is a launch replayed for metrics: flagged so by the collector, or its id is
// a profiled launch's (`profiled`, false for a stuck id). A kernel of the stuck id that has a
// duration of its own ran on the timeline, whatever its flag says.
inline bool IsReplayedLaunch(const KernelRow& k, bool profiled, const std::optional<StuckCorrelation>& stuck) {
  if (stuck && k.correlation_id == stuck->id && k.end > k.start) return false;
  return k.replayed() || profiled;
}

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_STUCK_CORRELATION_H_
