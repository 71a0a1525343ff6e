// The top-down's hot-kernel choice in a trace: one v1::TopDownSelection per chunk at most, its
// kernels naming interned strings. Readers keep the message as it is stored.
//
// Encode: the choice (HotKernelChoice, names interned) -> v1::TopDownSelection.
// Decode: the checks of its names and devices.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_TOP_DOWN_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_TOP_DOWN_H_

#include <cstdint>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/hot_kernel_choice.h"
#include "lib/core/record_codec/decode_checks.h"

namespace cuscope::core {

// The choice made at `time_ns` from `window_kernel_ns` of kernel time.
void EncodeTopDownSelection(uint64_t time_ns, uint64_t window_kernel_ns, v1::TopDownSelection* out);
// One chosen kernel, appended in order (hottest first); `name` is its interned name.
void EncodeHotKernel(const HotKernelChoice& kernel, uint32_t name, v1::HotKernel* out);

// DataLoss when a chosen kernel names a string `chunk.dict` does not define or a device id past
// kMaxDevices.
absl::Status CheckTopDownSelection(const v1::TopDownSelection& selection, const ChunkContext& chunk);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_TOP_DOWN_H_
