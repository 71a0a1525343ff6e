// CUPTI's profiler calls take a parameter struct whose first field is its size, so CUPTI can tell
// which version of the struct the caller was built with. Params<T>(T_STRUCT_SIZE) zeroes every
// other field.
#ifndef CUSCOPE_LIB_CUPTI_CUPTI_PARAMS_H_
#define CUSCOPE_LIB_CUPTI_CUPTI_PARAMS_H_

#include <cstddef>

namespace cuscope::cupti {

template <typename T>
T Params(size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_CUPTI_PARAMS_H_
