// Monitor mode's running totals as `cuscope status` shows them (ProcessStatus of
// proto/cuscope/v1/control.proto).
#ifndef CUSCOPE_LIB_MONITOR_PROCESS_STATUS_H_
#define CUSCOPE_LIB_MONITOR_PROCESS_STATUS_H_

#include <cstddef>

#include "cuscope/v1/control.pb.h"
#include "lib/monitor/running_totals.h"

namespace cuscope::monitor {

// How many kernel rows a status names: those with the most GPU time, any device.
inline constexpr size_t kStatusTopKernels = 10;

// Sets the figures of `status` that come from the totals (intervals, devices, calls, top
// kernels); leaves the rest alone.
void FillProcessStatus(const RunningTotals& totals, v1::ProcessStatus* status);

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_PROCESS_STATUS_H_
