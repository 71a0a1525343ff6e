// What every record kind's decoder shares: the chunk its rows come from, the bounds a decoded
// trace promises (trace_reader.h lists them and says why) and how a row that breaks one is
// reported (DataLoss, "corrupt trace: ..." naming the field).
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_DECODE_CHECKS_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_DECODE_CHECKS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "lib/core/dictionary.h"

namespace cuscope::core {

// Device ids are below this (trace_reader.h).
inline constexpr uint32_t kMaxDevices = 64;
// CUPTI reports registers per thread in 16 bits: a larger value was not written by the collector.
inline constexpr uint32_t kMaxRegistersPerThreadField = 0xffff;

// The chunk a row is decoded from: timestamps in it are relative to `base_time_ns`, damage
// messages name its `sequence`, and the ids it carries must be defined in `dict`.
struct ChunkContext {
  const Dictionary& dict;
  uint64_t base_time_ns = 0;
  uint64_t sequence = 0;
};

// DataLoss "corrupt trace: <what>".
absl::Status Corrupt(const std::string& what);
// DataLoss naming the device id past kMaxDevices that `what` carries.
absl::Status BadDevice(const std::string& what, uint32_t device);

inline bool DeviceOk(uint32_t device) { return device < kMaxDevices; }
// Ids a row may carry: a defined thread, a defined string or none (0).
inline bool ThreadOk(const Dictionary& dict, uint32_t id) { return id > 0 && id <= dict.thread_count(); }
inline bool StringOk(const Dictionary& dict, uint32_t id) { return id <= dict.string_count(); }

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_DECODE_CHECKS_H_
