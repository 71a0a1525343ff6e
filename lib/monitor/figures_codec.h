// Monitor figures to and from the trace's v1::MonitorInterval (kernel and counter names as
// interned string ids), so a monitor run's file is read back by `cuscope analyze` and `report`.
#ifndef CUSCOPE_LIB_MONITOR_FIGURES_CODEC_H_
#define CUSCOPE_LIB_MONITOR_FIGURES_CODEC_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "cuscope/v1/trace.pb.h"
#include "lib/core/dictionary.h"
#include "lib/monitor/figures.h"

namespace cuscope::monitor {

// `intern` gives a name's string id (ChunkBuilder::InternString).
void EncodeInterval(const IntervalFigures& figures, const std::function<uint32_t(std::string_view)>& intern,
                    v1::MonitorInterval* out);
// `interval` has passed core::CheckMonitorInterval against `dict`.
IntervalFigures DecodeInterval(const v1::MonitorInterval& interval, const core::Dictionary& dict);

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_FIGURES_CODEC_H_
