// Monitor mode's figures in a trace: v1::MonitorInterval messages, their kernel and counter names
// interned strings. Readers keep the messages as stored; EncodeMonitorInterval and
// DecodeMonitorInterval turn core::IntervalFigures (monitor_figures.h) into them and back.
//
// Decode: the checks of names, devices and the idle split.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_MONITOR_INTERVAL_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_MONITOR_INTERVAL_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/dictionary.h"
#include "lib/core/monitor_figures.h"
#include "lib/core/record_codec/decode_checks.h"

namespace cuscope::core {

// DataLoss when the interval names a string `chunk.dict` does not define, a device id past
// kMaxDevices, ends before it starts, or splits a device's idle time into more causes than exist.
absl::Status CheckMonitorInterval(const v1::MonitorInterval& interval, const ChunkContext& chunk);

// `intern` gives a name's string id (ChunkBuilder::InternString).
void EncodeMonitorInterval(const IntervalFigures& figures, const std::function<uint32_t(std::string_view)>& intern,
                           v1::MonitorInterval* out);
// `interval` has passed CheckMonitorInterval against `dict`.
IntervalFigures DecodeMonitorInterval(const v1::MonitorInterval& interval, const Dictionary& dict);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_MONITOR_INTERVAL_H_
