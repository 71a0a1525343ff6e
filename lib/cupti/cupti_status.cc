#include "lib/cupti/cupti_status.h"

#include "absl/strings/str_cat.h"

namespace cuscope::cupti {

absl::Status CuptiStatus(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI error";
  const std::string msg = absl::StrCat(what, " failed: ", text, " (", static_cast<int>(result), ")");
  switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return absl::ResourceExhaustedError(
          absl::StrCat(msg, "; another CUPTI tool (torch.profiler, nsys, ncu, ...) is attached to this process"));
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_UNKNOWN:
      return absl::UnavailableError(msg);
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

std::string ExplainCounterError(const absl::Status& st) {
  std::string out(st.message());
  if (absl::IsPermissionDenied(st)) out += kCountersReservedHint;
  return out;
}

}  // namespace cuscope::cupti
