// Four kinds of kernel for the kernel-internals analysis, one launch each per iteration:
//
//   stream_triad    c = a + s*b over 3 x 256 MiB: DRAM-bound
//   fma_chains      eight independent FMA chains per thread, no memory: compute-bound
//   pointer_chase   one block of 64 threads per SM (a 200 KiB shared-memory request), each thread
//                   following a dependent chain of loads through 1 GiB: low occupancy and latency-bound
//
//   example_kernel_internals [--iterations N] [--kernel stream_triad|fma_chains|pointer_chase|all]
//
// Prints a checksum of every result, so a profiled run can be checked against a plain one.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e = (call);                                                                \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void stream_triad(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                             float s, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    c[i] = a[i] + s * b[i];
  }
}

__global__ void fma_chains(float* out, int iterations) {
  float x[8];
  for (int j = 0; j < 8; ++j) x[j] = threadIdx.x * 1e-3f + j;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = fmaf(x[j], 0.9999f, 0.0001f);
  }
  float sum = 0;
  for (int j = 0; j < 8; ++j) sum += x[j];
  out[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = sum;
}

__global__ void pointer_chase(const unsigned* __restrict__ next, unsigned* out, int steps) {
  extern __shared__ unsigned scratch[];  // only there to hold the SM: one block fits
  unsigned p = (blockIdx.x * blockDim.x + threadIdx.x) * 9973u;
  for (int i = 0; i < steps; ++i) p = next[p];
  scratch[threadIdx.x] = p;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = scratch[threadIdx.x];
}

namespace {

double Checksum(const float* d, size_t n) {
  std::vector<float> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0;
  for (float v : h) s += v;
  return s;
}

double Checksum(const unsigned* d, size_t n) {
  std::vector<unsigned> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  double s = 0;
  for (unsigned v : h) s += v;
  return s;
}

__global__ void fill(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    p[i] = v + (i % 7);
  }
}

// A random-looking permutation step: each index leads far away, so every load misses the caches.
__global__ void fill_chain(unsigned* next, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    next[i] = static_cast<unsigned>((i * 2654435761ull + 12345) % n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 1;
  std::string which = "all";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) {
      iterations = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--kernel") && i + 1 < argc) {
      which = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N] [--kernel stream_triad|fma_chains|pointer_chase|all]\n",
                   argv[0]);
      return 2;
    }
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t n = 64ull << 20;  // 64 Mi floats, 256 MiB per array
  float *a, *b, *c, *out;
  unsigned *next, *chase_out;
  const size_t chain = 256ull << 20;  // 256 Mi entries, 1 GiB
  const int fma_blocks = sms * 8, fma_threads = 256;
  const int chase_threads = 64, chase_steps = 2000;
  const size_t chase_shared = 200u << 10;
  CHECK(cudaMalloc(&a, n * 4));
  CHECK(cudaMalloc(&b, n * 4));
  CHECK(cudaMalloc(&c, n * 4));
  CHECK(cudaMalloc(&out, (size_t)fma_blocks * fma_threads * 4));
  CHECK(cudaMalloc(&next, chain * 4));
  CHECK(cudaMalloc(&chase_out, (size_t)sms * chase_threads * 4));
  CHECK(cudaMemset(c, 0, n * 4));
  CHECK(cudaMemset(out, 0, (size_t)fma_blocks * fma_threads * 4));
  CHECK(cudaMemset(chase_out, 0, (size_t)sms * chase_threads * 4));
  fill<<<1024, 256>>>(a, n, 1.0f);
  fill<<<1024, 256>>>(b, n, 2.0f);
  fill_chain<<<1024, 256>>>(next, chain);
  CHECK(cudaFuncSetAttribute(pointer_chase, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)chase_shared));
  CHECK(cudaDeviceSynchronize());
  const bool all = which == "all";
  for (int it = 0; it < iterations; ++it) {
    if (all || which == "stream_triad") stream_triad<<<sms * 16, 512>>>(a, b, c, 3.0f, n);
    if (all || which == "fma_chains") fma_chains<<<fma_blocks, fma_threads>>>(out, 20000);
    if (all || which == "pointer_chase") {
      pointer_chase<<<sms, chase_threads, chase_shared>>>(next, chase_out, chase_steps);
    }
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("kernel_internals iterations=%d kernels=%s\n", iterations, which.c_str());
  std::printf("checksum_triad=%.6e\n", Checksum(c, n));
  std::printf("checksum_fma=%.6e\n", Checksum(out, (size_t)fma_blocks * fma_threads));
  std::printf("checksum_chase=%.6e\n", Checksum(chase_out, (size_t)sms * chase_threads));
  return 0;
}
