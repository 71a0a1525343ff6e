// The trace header a collection session writes first: who ran (process, host, command line,
// rank), with what (CUPTI version, the library's version, clocks), and what was asked for (the
// session's configuration). The machine's devices and versions are added when it is written.
#ifndef CUSCOPE_LIB_CUPTI_TRACE_HEADER_H_
#define CUSCOPE_LIB_CUPTI_TRACE_HEADER_H_

#include <cstdint>
#include <string>

#include "lib/settings/config.h"
#include "lib/cupti/cupti_api.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::cupti {

// `entry` says how cuscope was started ("injection", "preload", "session"); `start_ns` is the
// session's start on CUPTI's clock.
v1::Header BuildTraceHeader(const settings::Config& config, const std::string& entry, CuptiApi& cupti, uint64_t start_ns);

// CUPTI's clock and CLOCK_REALTIME read together: the realtime clock just before and after CUPTI's,
// their mean, and half their distance as the uncertainty.
v1::ClockReference ReadClockReference(CuptiApi& cupti);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_TRACE_HEADER_H_
