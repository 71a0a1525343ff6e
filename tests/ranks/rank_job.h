// Synthetic traces of a data-parallel job, one per rank: each step (an NVTX range "step") a
// compute kernel, then an all-reduce that every rank's NCCL kernel finishes together (the last rank
// to arrive sets the end). One rank can be made a straggler by compute, by a host gap or by an input
// copy; communication can overlap a second compute kernel; a rank's clock can run ahead (another
// host). Shared by the tests of the rank set's analysis and of its report page.
#ifndef CUSCOPE_TESTS_RANKS_RANK_JOB_H_
#define CUSCOPE_TESTS_RANKS_RANK_JOB_H_

#include <string>
#include <vector>

namespace cuscope::testing {

inline constexpr double kRankStepUs = 20'000;
inline constexpr double kRankComputeUs = 10'000;

struct Job {
  int ranks = 4;
  int steps = 20;
  int late_rank = -1;          // the straggler, if any
  double extra_compute_us = 0; // its extra compute before each all-reduce
  double host_gap_us = 0;      // or its GPU idle before the all-reduce (the launch came late)
  double copy_us = 0;          // or an input copy before it
  bool overlap = false;        // the all-reduce beside a second compute kernel
  bool payloads = true;        // NCCL's NVTX ranges with payloads
  double jitter_us = 3;        // arrival jitter between ranks
  int early_rank = -1;         // a rank whose all-reduce starts early (its GPU had less to do)
  double early_us = 0;
  std::string step_name = "step";  // the NVTX range of each step
};

// Rank `r`'s trace, written to a temporary file whose path is returned; its CUPTI clock runs
// `clock_shift_us` ahead of the wall clock (on host "node-b"), with a clock reference saying so
// unless `reference` is false.
std::string RankTrace(const Job& job, int r, double clock_shift_us = 0, bool reference = true);

// Every rank's trace, with no clock shift.
std::vector<std::string> JobTraces(const Job& job);

}  // namespace cuscope::testing

#endif  // CUSCOPE_TESTS_RANKS_RANK_JOB_H_
