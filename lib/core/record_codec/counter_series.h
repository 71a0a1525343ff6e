// Samples of one GPU counter on one device in a trace, one v1::CounterSeries message per series:
// starts delta-encoded, durations an optional column (empty when every sample is instantaneous).
//
// Encode: CounterPoints (with the series' device, source and interned name) -> v1::CounterSeries.
// Decode: v1::CounterSeries -> one CounterSample per point, the name and device checked.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_COUNTER_SERIES_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_COUNTER_SERIES_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// Writes the series of `points` (in time order); `name` is the counter's interned name and
// `base_time_ns` the chunk's base time.
void EncodeCounterSeries(uint32_t device, v1::CounterSource source, uint32_t name,
                         const std::vector<CounterPoint>& points, uint64_t base_time_ns, v1::CounterSeries* out);

// Appends the series' samples to `out`. DataLoss when its columns differ in length, or it names a
// string `chunk.dict` does not define or a device id past kMaxDevices.
absl::Status DecodeCounterSeries(const v1::CounterSeries& series, const ChunkContext& chunk,
                                 std::vector<CounterSample>* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_COUNTER_SERIES_H_
