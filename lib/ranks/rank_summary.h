// What the analysis of a set of rank traces keeps of each trace: who the rank is, its
// communication figures, each collective's arrival (on the wall clock) with what its device did
// since the collective before, and its steps. Built from one trace's timeline, which can then be
// freed: `cuscope analyze rank_*.cuscope` holds one trace per worker and these summaries, never all
// traces at once.
//
// Collectives are matched across ranks by (key, sequence): the key is the communicator (NCCL's
// hash of it, the same on every rank, from its NVTX payloads) or, where NCCL says nothing, the
// order in which the rank's NCCL streams first ran a kernel ("NCCL stream 1"): NCCL requires every
// rank to call the collectives of a communicator in the same order.
//
// Steps are the instances of an NVTX range: the one named, or else the range name with the most
// outermost instances (at least two). A step's GPU work is the time of the kernels (not NCCL's),
// copies and memsets launched from any thread while the step's range was open.
#ifndef CUSCOPE_LIB_RANKS_RANK_SUMMARY_H_
#define CUSCOPE_LIB_RANKS_RANK_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/analysis/finding.h"
#include "lib/analysis/nccl.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"

namespace cuscope::ranks {

struct RankIdentity {
  int32_t rank = -1;  // -1: unknown (no launcher variables): the trace's position names it
  int32_t local_rank = -1;
  int32_t world_size = -1;
  int32_t node_rank = -1;
  std::string host;
  std::string boot_id;
  std::string job_id;
  std::string launcher;
  uint32_t pid = 0;
  std::string path;
  int index = 0;  // position among the traces given
  // "rank 3", or "trace 2 (pid 1234)" without a rank.
  std::string Label() const;
};

// Who a trace's header says its process was; `path` and `index` (its position among the traces
// given) name it where the header names no rank.
RankIdentity IdentityOf(const v1::Session& session, const std::string& path, int index);

// The device between the collective before (on the same key; the device's first operation for
// the first) and this one's start.
struct BeforeCollective {
  uint64_t compute_ns = 0;  // kernels that are not NCCL's
  uint64_t copy_ns = 0;     // copies and memsets while no kernel computed
  uint64_t idle_ns = 0;     // nothing ran
  uint64_t sync_ns = 0;     // of the idle time: a host thread waited in a synchronization call
  void Add(const BeforeCollective& o) {
    compute_ns += o.compute_ns;
    copy_ns += o.copy_ns;
    idle_ns += o.idle_ns;
    sync_ns += o.sync_ns;
  }
};

struct CollectiveArrival {
  uint32_t key = 0;  // index into RankSummary::keys
  uint32_t sequence = 0;
  analysis::Collective collective = analysis::Collective::kUnknown;
  uint64_t start = 0;  // wall clock, ns
  BeforeCollective before;
};

struct StepTiming {
  uint64_t start = 0;  // wall clock, ns (the range on the host)
  uint64_t end = 0;    // not before start
  uint64_t compute_ns = 0;  // kernels launched in the step, not NCCL's
  uint64_t copy_ns = 0;     // copies and memsets launched in the step
  uint64_t work_ns() const { return compute_ns + copy_ns; }
  uint64_t duration() const { return end - start; }
};

struct RankSummary {
  RankIdentity id;
  bool clock_aligned = false;  // the trace had a clock reference
  uint64_t active_ns = 0;          // sum over devices of their counted active span
  uint64_t kernel_ns = 0;          // kernel time: the kernels' durations summed (as cuda_gpu_kern_sum)
  uint64_t communication_ns = 0;   // union of NCCL kernels
  uint64_t overlapped_ns = 0;      // of it, beside compute
  uint64_t exposed_ns = 0;         // of it, with nothing beside it
  uint64_t nccl_calls = 0;         // from NCCL's NVTX ranges
  uint64_t nccl_calls_without_kernel = 0;
  std::vector<std::string> keys;  // "communicator 0x1f2e3d4c5b6a7988" or "NCCL stream 1"
  std::vector<CollectiveArrival> collectives;  // by start
  std::string step_name;
  std::vector<StepTiming> steps;  // by start
  std::vector<analysis::Finding> findings;  // this trace's comm.exposed
  bool truncated = false;
};

struct RankSummaryOptions {
  std::string step_range;  // "": the most repeated outermost NVTX range
  analysis::Thresholds thresholds;
};

// `path` and `index` name the trace in the summary.
RankSummary SummarizeRank(const analysis::Timeline& timeline, const std::string& path, int index,
                          const RankSummaryOptions& options);

}  // namespace cuscope::ranks

#endif  // CUSCOPE_LIB_RANKS_RANK_SUMMARY_H_
