// A GPU load of known shape for the GPU-counter test: every SM full of warps issuing FMAs for a
// given wall time, then idle. Host functions only cross into the test (plain C++ there).
#include <cuda_runtime.h>

#include <string>

namespace cuscope::testing {
namespace {

__device__ unsigned long long GlobalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Four independent FMA chains per thread keep the schedulers issuing; the time check every 256
// rounds costs little. The global timer (ns) rather than clock64 makes the duration independent of
// the SM clock the GPU picks.
__global__ void counters_busy_fma(float* sink, unsigned long long ns) {
  float a = threadIdx.x, b = blockIdx.x, c = 1.0f, d = 2.0f;
  const float x = 0.999f, y = 0.001f;
  const unsigned long long start = GlobalTimerNs();
  while (GlobalTimerNs() - start < ns) {
#pragma unroll 16
    for (int i = 0; i < 256; ++i) {
      a = fmaf(a, x, y);
      b = fmaf(b, x, y);
      c = fmaf(c, x, y);
      d = fmaf(d, x, y);
    }
  }
  // Never true in practice; keeps the chains alive.
  if (a + b + c + d == -1.0f) sink[threadIdx.x] = a;
}

bool Check(cudaError_t e, const char* what, std::string* error) {
  if (e == cudaSuccess) return true;
  *error = std::string(what) + ": " + cudaGetErrorString(e);
  return false;
}

}  // namespace

// Makes `device` current and creates its primary context.
bool InitGpuForCounters(int device, std::string* error) {
  return Check(cudaSetDevice(device), "cudaSetDevice", error) && Check(cudaFree(nullptr), "cudaFree", error);
}

// Keeps every SM of the current device busy for about `seconds`, then waits for the GPU.
bool KeepGpuBusy(double seconds, std::string* error) {
  int device = 0, sms = 0;
  if (!Check(cudaGetDevice(&device), "cudaGetDevice", error)) return false;
  if (!Check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute", error)) {
    return false;
  }
  float* sink = nullptr;
  if (!Check(cudaMalloc(&sink, 1024 * sizeof(float)), "cudaMalloc", error)) return false;
  // Ten back-to-back launches: the queue never drains in between, and no launch is long enough
  // to trouble a display watchdog on a desktop GPU.
  const auto slice_ns = static_cast<unsigned long long>(seconds * 1e9 / 10);
  for (int i = 0; i < 10; ++i) counters_busy_fma<<<2 * sms, 1024>>>(sink, slice_ns);
  const bool ok = Check(cudaGetLastError(), "launch", error) && Check(cudaDeviceSynchronize(), "sync", error);
  cudaFree(sink);
  return ok;
}

}  // namespace cuscope::testing
