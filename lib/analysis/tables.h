// Summary tables with the columns nsys users know (`cuda_gpu_kern_sum`, `cuda_api_sum`, ...), built
// from the timeline. The table type and its renderings are table.h; the catalogue of reports
// `cuscope stats` builds by name is report_catalogue.h.
#ifndef CUSCOPE_LIB_ANALYSIS_TABLES_H_
#define CUSCOPE_LIB_ANALYSIS_TABLES_H_

#include "lib/analysis/table.h"
#include "lib/analysis/thresholds.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

// Per kernel name: Time (%), Total Time (ns), Instances, Avg, Med, Min, Max, StdDev, Name.
Table KernelSummary(const Timeline& timeline);
// Kernels by launch site (cuda_kern_stack_sum): only launches whose call stack was taken.
Table KernelStackSummary(const Timeline& timeline);
// The same, grouped by kernel name, grid and block dimensions.
Table KernelGridBlockSummary(const Timeline& timeline);
// Per API function.
Table ApiSummary(const Timeline& timeline);
// nvtx_sum: the NVTX ranges by name, each range's length from its start to its end (push/pop and
// start/end ranges alike; CUPTI does not say which style a range had).
Table NvtxSummary(const Timeline& timeline);
// nvtx_gpu_proj_sum (nsys's report of that name): per NVTX range name, the GPU time its instances
// project onto the GPU, from the start of the first GPU operation launched inside an instance (by a
// call on the range's thread) to the end of the last; a step range's GPU time per step.
Table NvtxGpuProjectionSummary(const Timeline& timeline);
// Per memory operation kind (memcpy direction, memset): time, and size in MB.
Table MemoryTimeSummary(const Timeline& timeline);
Table MemorySizeSummary(const Timeline& timeline);
// Per (launch API, kernel): API time, queue delay (kernel start - API end, positive only) and
// kernel time.
Table KernelExecutionSummary(const Timeline& timeline);
// Per profiled kernel group (name, grid, block): its time, the sol/occupancy/stall/roofline
// figures averaged over its profiled launches, and the verdict (`kern_metrics`). Numeric cells of
// metrics that were not collected are empty.
Table KernelMetricsSummary(const Timeline& timeline, const Thresholds& thresholds = Thresholds());

// `gpu_metrics` (samples, min, avg, max per device and sampled GPU counter) is GpuMetricsSummary in
// gpu_counters.h.

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_TABLES_H_
