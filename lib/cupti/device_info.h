// What the driver says about the machine: devices and their limits, driver and CUPTI versions,
// and whether this user may read hardware counters.
//
// The driver library is opened at run time (dlopen), so a program linking cuscope still starts on
// a machine without an NVIDIA driver; then these functions say so instead of failing to load.
#ifndef CUSCOPE_LIB_CUPTI_DEVICE_INFO_H_
#define CUSCOPE_LIB_CUPTI_DEVICE_INFO_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::cupti {

struct SystemInfo {
  uint32_t driver_version = 0;  // e.g. 13000
  uint32_t cupti_version = 0;   // CUPTI API version, e.g. 130001
  uint32_t runtime_version = 0;  // 0 when the program has no CUDA runtime loaded
  std::vector<v1::Device> devices;
  // From /proc/driver/nvidia/params: 1 when only administrators may read counters.
  int profiling_admin_only = -1;  // -1 unknown
  bool is_root = false;
};

// Whether the NVIDIA driver library can be loaded in this process.
bool DriverLoadable();

// Whether the program already has a CUDA context (the calling thread's current one, or an active
// primary context on any device), asking only a driver the program has loaded and initialized.
bool DriverHasContext();

// Fails (Unavailable) when there is no driver or no device; the message says which.
absl::StatusOr<SystemInfo> QuerySystem();

// Human-readable description for `cuscope info`.
std::string DescribeSystem(const absl::StatusOr<SystemInfo>& info);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_DEVICE_INFO_H_
