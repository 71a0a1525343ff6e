#include "examples/inference_server/model_kernels.h"

namespace inference_server {
namespace {

constexpr int kThreads = 256;

// splitmix64: a full-period mix, so neighbouring indices give unrelated values.
__device__ uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void FillPseudoRandom(float* data, size_t count, uint64_t seed, float scale) {
  const uint64_t key = Mix(seed);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    // The top 24 bits as a fraction in [0, 1), then to [-1, 1): exact in float.
    const float unit = float(Mix(key ^ i) >> 40) * (1.0f / 16777216.0f);
    data[i] = scale * (2.0f * unit - 1.0f);
  }
}

__global__ void BiasTanh(float* y, const float* bias, int rows, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    y[i] = tanhf(y[i] + bias[i % rows]);
  }
}

// One block per column; each thread sums a strided share, then a tree in shared memory.
__global__ void ColumnSums(const float* y, int rows, float* sums) {
  __shared__ float partial[kThreads];
  const float* column = y + size_t(blockIdx.x) * rows;
  float s = 0;
  for (int r = threadIdx.x; r < rows; r += kThreads) s += column[r];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

// Enough blocks to fill an H200 a few times over; the loops stride over the rest.
unsigned GridFor(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return unsigned(blocks < 4096 ? blocks : 4096);
}

}  // namespace

cudaError_t LaunchFillPseudoRandom(float* data, size_t count, uint64_t seed, float scale, cudaStream_t stream) {
  FillPseudoRandom<<<GridFor(count), kThreads, 0, stream>>>(data, count, seed, scale);
  return cudaGetLastError();
}

cudaError_t LaunchBiasTanh(float* y, const float* bias, int rows, int cols, cudaStream_t stream) {
  const size_t count = size_t(rows) * cols;
  BiasTanh<<<GridFor(count), kThreads, 0, stream>>>(y, bias, rows, count);
  return cudaGetLastError();
}

cudaError_t LaunchColumnSums(const float* y, int rows, int cols, float* sums, cudaStream_t stream) {
  ColumnSums<<<cols, kThreads, 0, stream>>>(y, rows, sums);
  return cudaGetLastError();
}

}  // namespace inference_server
