// What a CUDA runtime or driver API call is, judged from the name CUPTI gives it.
#ifndef CUSCOPE_LIB_ANALYSIS_API_NAMES_H_
#define CUSCOPE_LIB_ANALYSIS_API_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace cuscope::analysis {

// What the host is doing while inside a call. The order is the precedence used when calls on
// several threads overlap one idle gap: a thread parked in a sync explains the gap before one
// that is merely launching.
enum class ApiCategory : uint8_t {
  kSync = 0,    // waits for the GPU: stream/device/event synchronize
  kCopy = 1,    // memcpy and memset calls
  kAlloc = 2,   // allocation, free, host registration
  kLaunch = 3,  // kernel and graph launches
  kOther = 4,
};
inline constexpr int kApiCategoryCount = 5;
std::string_view ApiCategoryName(ApiCategory category);

enum class SyncKind : uint8_t { kNone, kStream, kDevice, kEvent };

struct ApiTraits {
  ApiCategory category = ApiCategory::kOther;
  SyncKind sync = SyncKind::kNone;
  // A memcpy/memset call that returns only when the operation is done (no "Async" in its name).
  bool synchronous_transfer = false;
  // Allocation calls that synchronize the device as a side effect (cudaFree, cudaMallocHost, ...).
  bool implicit_sync = false;
  bool graph_launch = false;
};

// `cudaMemcpy_v3020` -> `cudaMemcpy`: the callback names carry the API version they appeared in.
std::string_view DisplayApiName(std::string_view cupti_name);
ApiTraits ClassifyApi(std::string_view cupti_name);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_API_NAMES_H_
