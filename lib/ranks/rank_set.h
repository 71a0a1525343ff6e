// The analysis of a set of rank traces (`cuscope analyze rank_*.cuscope`): the ranks side by
// side, each collective matched across them, steps compared, and the findings of the method's
// multi-GPU checklist in the symptom table's words.
//
// Summaries (rank_summary.h) are added one at a time, from any thread, and folded in at once: what
// is kept is a row per rank, a few numbers per matched collective instance and per step and rank,
// never the traces. For each collective instance (matched by key and sequence, over the ranks that
// have it):
//   arrival skew  the spread of the ranks' kernel starts on the aligned clock;
//   late rank     the rank that started last, when by `straggler_min_skew_us` or more after the
//                 others' mean start (the earliest left out, with three ranks or more: one early
//                 rank is no late one); the others wait for it inside their kernels (n x latest
//                 start - sum of starts);
//   its cause     what the late rank's device did since the collective before, against the mean of
//                 the others: more compute, a longer idle stretch (a host gap, and of it how much
//                 a host thread spent in a synchronization), more copies.
// A rank late at `straggler_min_share` of the instances matched on every rank is the straggler
// (ranks.straggler). Steps (NVTX, any backend: gloo, MPI, NCCL) compare each rank's GPU work per
// step, without communication, over the ranks whose step range is the one most ranks chose: the
// slowest rank's excess over the other ranks' median, as a share of the median step time, past
// `step_imbalance_min_share` is ranks.step_imbalance. Ties, wherever a rank is picked, go to the
// lower rank: the order summaries arrive in does not matter. Communication with no
// compute beside it on the ranks is ranks.comm_exposed ("communication not overlapped"), naming the
// collective on the critical path.
#ifndef CUSCOPE_LIB_RANKS_RANK_SET_H_
#define CUSCOPE_LIB_RANKS_RANK_SET_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/table.h"
#include "lib/analysis/thresholds.h"
#include "lib/ranks/rank_summary.h"

namespace cuscope::ranks {

struct RankRow {
  RankIdentity id;
  bool clock_aligned = false;
  bool truncated = false;
  uint64_t active_ns = 0;
  uint64_t kernel_ns = 0;
  uint64_t communication_ns = 0;
  uint64_t overlapped_ns = 0;
  uint64_t exposed_ns = 0;
  uint64_t nccl_calls = 0;
  uint64_t nccl_calls_without_kernel = 0;
  uint64_t collectives = 0;     // NCCL kernels in its trace
  uint64_t last_arrivals = 0;   // matched instances it started last (by more than the skew threshold)
  uint64_t late_ns = 0;         // summed: how much later than the others' mean it started then
  // Summed over those instances: its device's time since the collective before minus the others'
  // mean (negative parts count as 0 per field when the whole is taken).
  int64_t excess_compute_ns = 0;
  int64_t excess_copy_ns = 0;
  int64_t excess_idle_ns = 0;
  int64_t excess_sync_ns = 0;
  uint64_t steps = 0;
  std::string step_name;  // the NVTX range its steps are instances of
  double step_median_ns = 0;
  double step_work_median_ns = 0;
  std::vector<analysis::Finding> findings;  // its own trace's comm.exposed
};

struct RankSetReport {
  std::vector<RankRow> ranks;  // by rank (traces without one after, in the order given)
  std::vector<analysis::Finding> findings;  // ranked
  std::vector<analysis::Table> tables;       // ranks, rank_collectives, rank_steps
  std::vector<std::string> warnings;
  uint64_t matched_instances = 0;  // collective instances every rank with collectives has
  std::string step_name;
  uint64_t matched_steps = 0;
};

class RankSetAnalyzer {
 public:
  explicit RankSetAnalyzer(analysis::Thresholds thresholds) : thresholds_(std::move(thresholds)) {}
  // Folds a rank's summary in (thread-safe); the summary can be dropped afterwards.
  void Add(const RankSummary& summary);
  RankSetReport Finish();

 private:
  struct Instance {
    analysis::Collective collective = analysis::Collective::kUnknown;
    uint32_t ranks = 0;
    uint64_t first_start = 0;  // the first rank's start: the others are kept as offsets from it
    int64_t min_offset = 0;
    int64_t max_offset = 0;
    int64_t sum_offset = 0;
    uint32_t late_row = 0;
    BeforeCollective late_before;
    BeforeCollective sum_before;
  };
  struct StepCell {
    uint32_t row = 0;
    uint64_t duration = 0;
    uint64_t work = 0;
    uint64_t compute = 0;
    uint64_t copy = 0;
  };

  std::mutex mu_;
  analysis::Thresholds thresholds_;
  std::vector<RankRow> rows_;
  uint32_t ranks_with_collectives_ = 0;
  absl::flat_hash_map<std::string, uint32_t> key_ids_;
  std::vector<std::string> keys_;
  absl::flat_hash_map<uint64_t, Instance> instances_;  // key id << 32 | sequence
  std::vector<std::vector<StepCell>> steps_;           // by step index
  std::map<std::string, uint32_t> step_names_;         // the step name each rank chose, counted
};

// The text `cuscope analyze` prints for a set: the ranks, the findings, the tables.
std::string RenderRankSetText(const RankSetReport& report, size_t top_rows);
// The same as report.proto's Report (the tables and findings), as JSON.
std::string RenderRankSetJson(const RankSetReport& report);

}  // namespace cuscope::ranks

#endif  // CUSCOPE_LIB_RANKS_RANK_SET_H_
