#include "examples/inference_server/bulk_kernels.h"

namespace inference_server {
namespace {

// Any size that divides an SM's thread limit fills the SM's threads when enough blocks reside, so
// no other kernel's block fits beside them.
constexpr int kBulkThreads = 256;

// The GPU's nanosecond timer. The spin counts time by it rather than by clock64(): SM cycles per
// microsecond follow the clock the GPU runs at under load, nanoseconds do not, so the kernel
// lasts what --bulk-kernel-us says on any GPU at any clock.
__device__ uint64_t GlobalTimerNs() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// Named in snake case, unlike the model's kernels, so that it stands out in a profile's kernel
// list as the interference it is. The write of the spin count gives the kernel an effect (and
// keeps the loop from being optimized away).
__global__ void bulk_spin_kernel(uint64_t spin_ns, uint64_t* sink) {
  const uint64_t start = GlobalTimerNs();
  uint64_t spins = 0;
  while (GlobalTimerNs() - start < spin_ns) ++spins;
  if (threadIdx.x == 0) sink[blockIdx.x] = spins;
}

}  // namespace

cudaError_t BulkSpinResidentBlocks(int* blocks) {
  int device = 0;
  int sms = 0;
  int per_sm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bulk_spin_kernel, kBulkThreads, 0);
  if (err == cudaSuccess) *blocks = sms * per_sm;
  return err;
}

cudaError_t LaunchBulkSpin(int blocks, uint64_t spin_ns, uint64_t* sink, cudaStream_t stream) {
  bulk_spin_kernel<<<blocks, kBulkThreads, 0, stream>>>(spin_ns, sink);
  return cudaGetLastError();
}

}  // namespace inference_server
