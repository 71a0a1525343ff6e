// The CUDA runtime's entry points that nvcc's launch code calls, faked: registration does nothing,
// the launch configuration is kept, and the launch itself takes the call stack the way the
// collector takes it inside cudaLaunchKernel, for launch_glue_test.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/process/call_stack.h"

struct FakeDim3 {
  unsigned x, y, z;
};

std::vector<uintptr_t> g_launch_stack;  // taken by the last launch, innermost first

extern "C" {

void** __cudaRegisterFatBinary(void*) {
  static void* handle = nullptr;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*) {}
int __cudaGetKernel(void** kernel, const void* function) {
  *kernel = const_cast<void*>(function);
  return 0;
}
unsigned __cudaPushCallConfiguration(FakeDim3, FakeDim3, size_t, void*) { return 0; }
int __cudaPopCallConfiguration(FakeDim3* grid, FakeDim3* block, size_t* shared, void** stream) {
  *grid = {1, 1, 1};
  *block = {1, 1, 1};
  *shared = 0;
  *stream = nullptr;
  return 0;
}
__attribute__((noinline)) int __cudaLaunchKernel(void*, FakeDim3, FakeDim3, void**, size_t, void*) {
  uintptr_t pcs[cuscope::process::kMaxCallStackFrames];
  g_launch_stack.assign(pcs, pcs + cuscope::process::CaptureCallStack(pcs, cuscope::process::kMaxCallStackFrames, 0));
  return 0;
}

}  // extern "C"
