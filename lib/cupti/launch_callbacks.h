// The runtime and driver calls that launch a kernel, by CUPTI callback id: what kernel metrics
// and launch stacks watch. A runtime launch goes through one of the driver launches; the kernel
// record carries the runtime call's correlation id.
#ifndef CUSCOPE_LIB_CUPTI_LAUNCH_CALLBACKS_H_
#define CUSCOPE_LIB_CUPTI_LAUNCH_CALLBACKS_H_

#include <cupti.h>

#include <algorithm>
#include <iterator>

namespace cuscope::cupti {

inline constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
inline constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,         CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000};

inline bool IsDriverLaunchCallback(CUpti_CallbackId cbid) {
  return std::find(std::begin(kDriverLaunches), std::end(kDriverLaunches), cbid) != std::end(kDriverLaunches);
}
inline bool IsRuntimeLaunchCallback(CUpti_CallbackId cbid) {
  return std::find(std::begin(kRuntimeLaunches), std::end(kRuntimeLaunches), cbid) != std::end(kRuntimeLaunches);
}

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_LAUNCH_CALLBACKS_H_
