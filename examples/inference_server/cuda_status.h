// CUDA runtime and cuBLAS results as absl::Status: every call the server makes is checked, and a
// failure names the call that failed and what the library said.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_CUDA_STATUS_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace inference_server {

// OK for cudaSuccess, else an Internal error "`what`: <CUDA's name and description>".
absl::Status CudaStatus(cudaError_t result, absl::string_view what);
// OK for CUBLAS_STATUS_SUCCESS, else an Internal error "`what`: <cuBLAS's name and description>".
absl::Status CublasStatus(cublasStatus_t result, absl::string_view what);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_CUDA_STATUS_H_
