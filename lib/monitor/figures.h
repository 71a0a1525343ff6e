// The figures monitor mode fills are the trace's monitor records (lib/core/monitor_figures.h): here
// under lib/monitor's namespace, as its code and its users name them.
#ifndef CUSCOPE_LIB_MONITOR_FIGURES_H_
#define CUSCOPE_LIB_MONITOR_FIGURES_H_

#include "lib/core/monitor_figures.h"

namespace cuscope::monitor {

using core::CopyFigures;
using core::CounterFigures;
using core::DeviceFigures;
using core::HostCause;
using core::HostCauseName;
using core::IntervalFigures;
using core::kHostCauseCount;
using core::KernelFigures;
using core::kRequestBucketSeconds;
using core::RequestHistogram;
using core::RouteRequestFigures;

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_FIGURES_H_
