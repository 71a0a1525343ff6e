// Where the CUPTI library this process uses was loaded from. NVTX reaches CUPTI through
// NVTX_INJECTION64_PATH, which names a file, so the collector needs this path; it is found here
// because only lib/cupti may include CUPTI's headers.
#ifndef CUSCOPE_LIB_CUPTI_CUPTI_LOCATION_H_
#define CUSCOPE_LIB_CUPTI_CUPTI_LOCATION_H_

#include <string>

namespace cuscope::cupti {

// The path of the loaded libcupti (the file that holds cuptiActivityEnable), as the dynamic
// loader names it; empty when the loader cannot say.
std::string LoadedCuptiLibraryPath();

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CUPTI_LOCATION_H_
