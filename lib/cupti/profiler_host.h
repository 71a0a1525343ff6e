// CUPTI profiler host objects: the CPU side that both the Range Profiler (kernel metrics) and PM
// sampling (counters over time) use to turn metric names into the configuration image the GPU is
// programmed with, and counter data back into values. Only the profiler type differs.
#ifndef CUSCOPE_LIB_CUPTI_PROFILER_HOST_H_
#define CUSCOPE_LIB_CUPTI_PROFILER_HOST_H_

#include <cupti_profiler_host.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/cupti/profiler_api.h"

namespace cuscope::cupti {

// A host object for one chip and profiler type, deinitialized when it goes out of scope.
class ProfilerHost {
 public:
  // `counter_availability` may be empty (offline: every counter assumed available). Errors name
  // the chip and the profiler ("PM sampling on chip ..." or "chip ..."). `api` must outlive it.
  static absl::StatusOr<ProfilerHost> Create(ProfilerApi& api, CUpti_ProfilerType type, const std::string& chip,
                                             const std::vector<uint8_t>& counter_availability);
  ProfilerHost(ProfilerHost&& o) noexcept;
  ProfilerHost& operator=(ProfilerHost&& o) noexcept;
  ~ProfilerHost();

  CUpti_Profiler_Host_Object* get() const { return obj_; }
  // The object is the caller's to deinitialize (with Deinitialize) from here on.
  CUpti_Profiler_Host_Object* release();
  static void Deinitialize(ProfilerApi& api, CUpti_Profiler_Host_Object* obj);

 private:
  ProfilerHost(ProfilerApi& api, CUpti_Profiler_Host_Object* obj) : api_(&api), obj_(obj) {}
  ProfilerApi* api_;
  CUpti_Profiler_Host_Object* obj_ = nullptr;
};

// Adds `names` to the host object's configuration. A name the chip lacks fails the whole call and
// leaves the object unusable for further adds: try again on a fresh one.
absl::Status AddMetrics(ProfilerApi& api, CUpti_Profiler_Host_Object* host, const std::vector<std::string>& names);

// The configuration image of what was added, and the passes (kernel replays) it needs.
struct ConfigImage {
  std::vector<uint8_t> image;
  size_t passes = 0;
};
absl::StatusOr<ConfigImage> GetConfigImage(ProfilerApi& api, CUpti_Profiler_Host_Object* host);

// The value of every metric in `names` for range (Range Profiler) or sample (PM sampling) `index` of
// a decoded counter-data image, on a host object the metrics were added to.
absl::StatusOr<std::vector<double>> EvaluateToGpuValues(ProfilerApi& api, CUpti_Profiler_Host_Object* host,
                                                        const std::vector<const char*>& names,
                                                        const std::vector<uint8_t>& counter_data, size_t index);

// Pointers to the names, for CUPTI's arrays of C strings; valid while `names` is unchanged.
std::vector<const char*> CStrings(const std::vector<std::string>& names);

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_PROFILER_HOST_H_
