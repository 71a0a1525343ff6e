// Symptom: the host synchronizes after every step to read a scalar back, so the GPU idles while
// the host round-trips.
//   (default)  each step: kernel, 8-byte D2H copy of its result, cudaStreamSynchronize
//   --fixed    all steps queued asynchronously, results kept on the device, one copy and one
//              sync at the end
// Options: --steps N (default 10000).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CK(call)                                                                        \
  do {                                                                                  \
    cudaError_t err_ = (call);                                                          \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,         \
                   cudaGetErrorString(err_));                                           \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

using u64 = unsigned long long;

__global__ void init_kernel(unsigned* x, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = static_cast<unsigned>(i);
}

// x[i] += 1, and *sum = sum of the new values (block reduction, one atomic per block).
__global__ void step_kernel(unsigned* x, size_t n, u64* sum) {
  u64 local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned v = x[i] + 1;
    x[i] = v;
    local += v;
  }
  for (int off = 16; off > 0; off >>= 1) local += __shfl_down_sync(0xffffffffu, local, off);
  __shared__ u64 warp_sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = local;
  __syncthreads();
  if (warp == 0) {
    local = lane < int(blockDim.x / 32) ? warp_sums[lane] : 0;
    for (int off = 16; off > 0; off >>= 1) local += __shfl_down_sync(0xffffffffu, local, off);
    if (lane == 0) atomicAdd(sum, local);
  }
}

int main(int argc, char** argv) {
  bool fixed = false;
  int steps = 10000;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--fixed")) {
      fixed = true;
    } else if (!std::strcmp(argv[a], "--steps") && a + 1 < argc) {
      steps = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--fixed] [--steps N]\n", argv[0]);
      return 2;
    }
  }
  if (steps < 1) steps = 1;

  if (fixed)
    std::printf("example sync_every_step --fixed (fixed: %d steps asynchronous, 1 sync at the end)\n", steps);
  else
    std::printf("example sync_every_step (symptom: %d steps, D2H read-back + stream sync after each)\n",
                steps);

  const size_t n = size_t(1) << 22;  // 16 MiB of unsigned
  int device = 0, sms = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int block = 256, grid = 4 * sms;

  nvtxRangePushA("setup");
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned* d_x = nullptr;
  u64* d_sums = nullptr;
  u64* h_sums = nullptr;
  CK(cudaMalloc(&d_x, n * sizeof(unsigned)));
  CK(cudaMalloc(&d_sums, steps * sizeof(u64)));
  CK(cudaMallocHost(&h_sums, steps * sizeof(u64)));
  CK(cudaMemsetAsync(d_sums, 0, steps * sizeof(u64), stream));
  init_kernel<<<grid, block, 0, stream>>>(d_x, n);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(stream));
  nvtxRangePop();

  // After step s every x[i] == i + s + 1.
  auto expected = [n](int s) { return u64(n) * (n - 1) / 2 + u64(n) * (s + 1); };
  bool ok = true;

  nvtxRangePushA("work");
  for (int s = 0; s < steps; ++s) {
    step_kernel<<<grid, block, 0, stream>>>(d_x, n, d_sums + s);
    if (!fixed) {
      // The host "monitors" every step: read the scalar back and wait for it.
      CK(cudaMemcpyAsync(h_sums + s, d_sums + s, sizeof(u64), cudaMemcpyDeviceToHost, stream));
      CK(cudaStreamSynchronize(stream));
      if (h_sums[s] != expected(s)) ok = false;
    }
  }
  CK(cudaGetLastError());
  if (fixed)
    CK(cudaMemcpyAsync(h_sums, d_sums, steps * sizeof(u64), cudaMemcpyDeviceToHost, stream));
  CK(cudaStreamSynchronize(stream));
  nvtxRangePop();

  nvtxRangePushA("check");
  for (int s = 0; s < steps; ++s)
    if (h_sums[s] != expected(s)) ok = false;
  nvtxRangePop();

  CK(cudaFreeHost(h_sums));
  CK(cudaFree(d_sums));
  CK(cudaFree(d_x));
  CK(cudaStreamDestroy(stream));
  std::puts(ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
