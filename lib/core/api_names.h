// What a CUDA runtime or driver API call is, judged from the name CUPTI gives it.
#ifndef CUSCOPE_LIB_CORE_API_NAMES_H_
#define CUSCOPE_LIB_CORE_API_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"

#include "cuscope/v1/trace.pb.h"

namespace cuscope::core {

// What the host is doing while inside a call. The order is the precedence used when calls on
// several threads overlap one idle gap: a thread parked in a sync explains the gap before one
// that is merely launching.
enum class ApiCategory : uint8_t {
  kSync = 0,    // waits for the GPU: stream/device/event synchronize
  kCopy = 1,    // memcpy and memset calls
  kAlloc = 2,   // allocation, free, host registration
  // One-off preparation: CUDA graph construction and instantiation, stream capture, module and
  // library loading, context creation. Launches made while the thread is capturing a stream are
  // counted here too (they record graph nodes; nothing runs).
  kSetup = 3,
  kLaunch = 4,  // kernel and graph launches
  kOther = 5,
};
inline constexpr int kApiCategoryCount = 6;
std::string_view ApiCategoryName(ApiCategory category);

// What the host was doing while a device sat idle, judged from the API calls collected: the
// categories above that explain idle time, in their precedence, and kOutsideCuda when no collected
// call was running (the host computing, waiting on something else, or, under lean collection,
// inside a CUDA call that is not collected). Monitor mode's idle figures and a request's idle time
// are split by it.
enum class HostCause : uint8_t { kSync = 0, kCopy, kAlloc, kSetup, kLaunch, kOutsideCuda };
inline constexpr int kHostCauseCount = 6;
// "sync", "copy", "alloc", "setup", "launch", "outside_cuda": label values and trace names.
const char* HostCauseName(HostCause cause);
// The cause a call of `category` explains; kOutsideCuda for kOther (explains nothing).
HostCause HostCauseOf(ApiCategory category);

enum class SyncKind : uint8_t { kNone, kStream, kDevice, kEvent };

struct ApiTraits {
  ApiCategory category = ApiCategory::kOther;
  SyncKind sync = SyncKind::kNone;
  // A memcpy/memset call that returns only when the operation is done (no "Async" in its name).
  bool synchronous_transfer = false;
  // Allocation calls that synchronize the device as a side effect (cudaFree, cudaMallocHost, ...).
  bool implicit_sync = false;
  bool graph_launch = false;
  // cudaStreamBeginCapture / cudaStreamEndCapture (and the driver's): the calls between them on a
  // thread build a graph instead of running work.
  bool capture_begin = false;
  bool capture_end = false;
};

// The category a call explains time by, given what its thread did before it: a launch made while
// its thread captures a stream (between BeginCapture and EndCapture) records a graph node and runs
// nothing, so it counts as setup. One rule for the analyzer's idle causes, monitor mode's and a
// request's. Calls of one thread are fed in their order; threads may interleave.
class CallCategories {
 public:
  ApiCategory Of(uint64_t thread, const ApiTraits& traits);
  void Reset() { capturing_.clear(); }

 private:
  absl::flat_hash_set<uint64_t> capturing_;  // threads between BeginCapture and EndCapture
};

// `cudaMemcpy_v3020` -> `cudaMemcpy`: CUPTI's callback names carry the toolkit version the function
// appeared in (four or five digits), which is no part of its name. An API's own version stays:
// `cuMemcpyHtoD_v2` and `cuDeviceGetUuid_v2` are functions of their own (as nsys shows them).
std::string_view DisplayApiName(std::string_view cupti_name);
ApiTraits ClassifyApi(std::string_view cupti_name);

// Lean collection (the default activity kind "api") records only the calls the analyzer reads:
// every category but kOther: launches, copies and memsets, synchronization, allocation, and the
// one-off setup calls (graphs, stream capture, module and library loads, context creation). A call
// of kOther (cudaGetDevice, cudaStreamIsCapturing, cudaGetLastError, ...) is not recorded: in a
// lean trace the host's time in it counts as time outside CUDA.
bool CollectedWhenLean(std::string_view cupti_name);

// The synchronization record CUPTI's SYNCHRONIZATION kind writes for a call, by the call's name:
// stream, device (context) and event synchronization, and a stream's wait for an event
// (cudaStreamWaitEvent, which lean collection does not record as a call). SYNC_TYPE_UNKNOWN for
// every other call. Lean collection writes these records from the calls themselves
// (lib/cupti/call_timer.h), so that it needs no SYNCHRONIZATION kind.
v1::SyncType SyncRecordTypeOf(std::string_view cupti_name);
// Whether a stream call names its stream with per-thread default-stream semantics (the "_ptsz"
// and "_ptds" variants): its null stream is the calling thread's default stream.
bool PerThreadStreamCall(std::string_view cupti_name);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_API_NAMES_H_
