// Monitor mode's figures in a trace: v1::MonitorInterval messages, their kernel and counter names
// interned strings. Readers keep the messages as stored; lib/monitor/figures_codec.h turns them
// into monitor::IntervalFigures and back.
//
// Decode: the checks of names, devices and the idle split.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_MONITOR_INTERVAL_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_MONITOR_INTERVAL_H_

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"

namespace cuscope::core {

// DataLoss when the interval names a string `chunk.dict` does not define, a device id past
// kMaxDevices, ends before it starts, or splits a device's idle time into more causes than exist.
absl::Status CheckMonitorInterval(const v1::MonitorInterval& interval, const ChunkContext& chunk);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_MONITOR_INTERVAL_H_
