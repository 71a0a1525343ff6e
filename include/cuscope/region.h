// cuscope::Region: an RAII range around a region of interest. It is an NVTX range, so cuscope
// records it and Nsight Systems shows the same range.
//
//   void Step() {
//     cuscope::Region region("decode step");
//     ...
//   }
#ifndef CUSCOPE_REGION_H_
#define CUSCOPE_REGION_H_

#include <nvtx3/nvToolsExt.h>

namespace cuscope {

class Region {
 public:
  explicit Region(const char* name) { nvtxRangePushA(name); }
  ~Region() { nvtxRangePop(); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
};

// A point in time worth seeing on the timeline.
inline void Mark(const char* message) { nvtxMarkA(message); }

}  // namespace cuscope

#endif  // CUSCOPE_REGION_H_
