// `nccl_sum`: NCCL's communication per collective, as `nsys stats ... | grep -i nccl` gives it by
// hand, but grouped: kernels, their GPU time and share of all kernel time, the calls (from NCCL's
// NVTX ranges), bytes and bandwidth where the payloads say, and the exposed time.
#ifndef CUSCOPE_LIB_ANALYSIS_NCCL_SUMMARY_H_
#define CUSCOPE_LIB_ANALYSIS_NCCL_SUMMARY_H_

#include "lib/analysis/communication.h"
#include "lib/analysis/table.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

// One row per collective with kernels or calls: Time (%) of kernel time, Total Time (ns), Kernels,
// Avg, Med, Min, Max (ns), Calls, Bytes (from the calls joined to kernels, per rank), Algorithm
// Bandwidth and Bus Bandwidth (GB/s, nccl-tests' convention with the trace's world size; both empty
// without bytes; without a world size, bus bandwidth is empty, and so is algorithm bandwidth for the
// collectives whose bytes are one rank's share: AllGather, ReduceScatter, AllToAll, Gather,
// Scatter), Exposed (ns: no compute beside it), Variants (the kernel names' algorithm and protocol,
// as named). Calls that ran no kernel (a one-rank communicator copies or does nothing) are counted
// in Calls only.
Table NcclSummary(const Timeline& timeline);
// The same from the trace's communication, already built.
Table NcclSummary(const Timeline& timeline, const Communication& comm);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_NCCL_SUMMARY_H_
