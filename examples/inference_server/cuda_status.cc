#include "examples/inference_server/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace inference_server {

absl::Status CudaStatus(cudaError_t result, absl::string_view what) {
  if (result == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(result), " (", cudaGetErrorString(result), ")"));
}

absl::Status CublasStatus(cublasStatus_t result, absl::string_view what) {
  if (result == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cublasGetStatusName(result), " (", cublasGetStatusString(result), ")"));
}

}  // namespace inference_server
