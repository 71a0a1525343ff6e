// Metric values of one profiled kernel launch in a trace, one v1::KernelMetrics message each,
// naming the kernel and each metric by interned string.
//
// Encode: MetricRow (names already interned) -> v1::KernelMetrics.
// Decode: v1::KernelMetrics -> MetricRow, its strings and device checked.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_KERNEL_METRICS_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_KERNEL_METRICS_H_

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

void EncodeKernelMetrics(const MetricRow& metrics, v1::KernelMetrics* out);

// DataLoss when the row names a string `chunk.dict` does not define or a device id past
// kMaxDevices.
absl::Status DecodeKernelMetrics(const v1::KernelMetrics& metrics, const ChunkContext& chunk, MetricRow* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_KERNEL_METRICS_H_
