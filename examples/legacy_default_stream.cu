// Symptom: false dependency through the legacy default stream. Two independent workloads run on
// two streams made with plain cudaStreamCreate (blocking streams); a small bookkeeping kernel on
// stream 0 after each of them makes every kernel wait for all earlier work, so the two streams
// never overlap although nothing orders them.
//   (default)  cudaStreamCreate streams + bookkeeping kernels on the legacy default stream
//   --fixed    cudaStreamNonBlocking streams, bookkeeping on the workload's own stream
// Each workload kernel uses about half of the SMs, so two of them can run side by side.
// Options: --rounds N (default 1000).
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

constexpr unsigned kMul = 1664525u, kAdd = 1013904223u;
constexpr int kIters = 2000;  // LCG steps per element and launch: ~0.1 ms per kernel on an H200

__global__ void init_kernel(unsigned* x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = static_cast<unsigned>(i) * 2654435761u + seed;
}

__global__ void workload(unsigned* x, size_t n, int iters) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned v = x[i];
    for (int k = 0; k < iters; ++k) v = v * kMul + kAdd;
    x[i] = v;
  }
}

__global__ void bookkeeping(unsigned* counter) { atomicAdd(counter, 1u); }

int main(int argc, char** argv) {
  bool fixed = false;
  int rounds = 1000;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--fixed")) {
      fixed = true;
    } else if (!std::strcmp(argv[a], "--rounds") && a + 1 < argc) {
      rounds = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--fixed] [--rounds N]\n", argv[0]);
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;

  if (fixed)
    std::printf("example legacy_default_stream --fixed (fixed: 2 non-blocking streams overlap, "
                "%d rounds)\n", rounds);
  else
    std::printf("example legacy_default_stream (symptom: 2 blocking streams serialized by "
                "legacy default stream work, %d rounds)\n", rounds);

  const size_t n = size_t(1) << 20;  // 4 MiB per workload
  int device = 0, sms = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int block = 1024, half_grid = sms / 2 > 0 ? sms / 2 : 1;

  nvtxRangePushA("setup");
  cudaStream_t s1, s2;
  if (fixed) {
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  } else {
    CK(cudaStreamCreate(&s1));
    CK(cudaStreamCreate(&s2));
  }
  unsigned *d_a = nullptr, *d_b = nullptr, *d_counter = nullptr;
  CK(cudaMalloc(&d_a, n * sizeof(unsigned)));
  CK(cudaMalloc(&d_b, n * sizeof(unsigned)));
  CK(cudaMalloc(&d_counter, sizeof(unsigned)));
  unsigned *h_a = nullptr, *h_b = nullptr, *h_counter = nullptr;
  CK(cudaMallocHost(&h_a, n * sizeof(unsigned)));
  CK(cudaMallocHost(&h_b, n * sizeof(unsigned)));
  CK(cudaMallocHost(&h_counter, sizeof(unsigned)));
  CK(cudaMemsetAsync(d_counter, 0, sizeof(unsigned), s1));
  init_kernel<<<4 * sms, 256, 0, s1>>>(d_a, n, 1u);
  init_kernel<<<4 * sms, 256, 0, s2>>>(d_b, n, 2u);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s1));
  CK(cudaStreamSynchronize(s2));
  nvtxRangePop();

  nvtxRangePushA("work");
  // The legacy default stream (stream 0) in the symptom; the workload's own stream when fixed.
  cudaStream_t book1 = fixed ? s1 : cudaStreamLegacy, book2 = fixed ? s2 : cudaStreamLegacy;
  for (int r = 0; r < rounds; ++r) {
    workload<<<half_grid, block, 0, s1>>>(d_a, n, kIters);
    bookkeeping<<<1, 1, 0, book1>>>(d_counter);
    workload<<<half_grid, block, 0, s2>>>(d_b, n, kIters);
    bookkeeping<<<1, 1, 0, book2>>>(d_counter);
  }
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s1));
  CK(cudaStreamSynchronize(s2));
  if (!fixed) CK(cudaStreamSynchronize(cudaStreamLegacy));
  nvtxRangePop();

  nvtxRangePushA("check");
  CK(cudaMemcpyAsync(h_a, d_a, n * sizeof(unsigned), cudaMemcpyDeviceToHost, s1));
  CK(cudaMemcpyAsync(h_b, d_b, n * sizeof(unsigned), cudaMemcpyDeviceToHost, s1));
  CK(cudaMemcpyAsync(h_counter, d_counter, sizeof(unsigned), cudaMemcpyDeviceToHost, s1));
  CK(cudaStreamSynchronize(s1));
  // rounds * kIters LCG steps compose to one affine map v -> mul * v + add (mod 2^32).
  unsigned mul = 1, add = 0;
  for (long long k = 0; k < (long long)rounds * kIters; ++k) {
    mul *= kMul;
    add = add * kMul + kAdd;
  }
  bool ok = *h_counter == 2u * rounds;
  for (size_t i = 0; i < n && ok; ++i) {
    const unsigned a0 = static_cast<unsigned>(i) * 2654435761u + 1u;
    const unsigned b0 = static_cast<unsigned>(i) * 2654435761u + 2u;
    ok = h_a[i] == mul * a0 + add && h_b[i] == mul * b0 + add;
  }
  nvtxRangePop();

  CK(cudaFreeHost(h_a));
  CK(cudaFreeHost(h_b));
  CK(cudaFreeHost(h_counter));
  CK(cudaFree(d_a));
  CK(cudaFree(d_b));
  CK(cudaFree(d_counter));
  CK(cudaStreamDestroy(s1));
  CK(cudaStreamDestroy(s2));
  std::puts(ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
