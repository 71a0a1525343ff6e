// `-c nvtx --nvtx-capture NAME`: CUPTI's NVTX callbacks (CUPTI_CB_DOMAIN_NVTX; NVTX reaches CUPTI
// through NVTX_INJECTION64_PATH) read into core::NvtxCaptureWatch.
//
// Range names are read from nvtxRangePushA/W/Ex, nvtxRangeStartA/W/Ex and their nvtxDomain*
// twins: ASCII messages, and wide ones whose characters are all ASCII. A registered string
// (NVTX_MESSAGE_TYPE_REGISTERED) has no text here and matches no name.
#ifndef CUSCOPE_LIB_CUPTI_NVTX_CAPTURE_H_
#define CUSCOPE_LIB_CUPTI_NVTX_CAPTURE_H_

#include <cstdint>
#include <vector>

#include <cupti.h>

#include "lib/core/nvtx_capture_watch.h"

namespace cuscope::cupti {

// The NVTX callback ids the capture range needs.
const std::vector<CUpti_CallbackId>& NvtxCaptureCallbacks();

// Hands one NVTX call to `watch`; `thread` tells the program's threads apart.
core::NvtxCaptureWatch::Edge ObserveNvtxCall(core::NvtxCaptureWatch& watch, CUpti_CallbackId cbid,
                                             const CUpti_NvtxData& data, uint64_t thread);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_NVTX_CAPTURE_H_
