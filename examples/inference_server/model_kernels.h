// The model's own kernels (the GEMMs are cuBLAS's). Each launcher enqueues one kernel on `stream`
// and returns the launch's error, so the caller checks it like any other CUDA call.
//
// Matrices are column-major floats: `rows` x `cols` with leading dimension `rows`.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_MODEL_KERNELS_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_MODEL_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace inference_server {

// data[i] = `scale` * a value in [-1, 1) that depends only on `seed` and i: weights and request
// inputs are the same on every run.
cudaError_t LaunchFillPseudoRandom(float* data, size_t count, uint64_t seed, float scale, cudaStream_t stream);
// y[r, c] = tanh(y[r, c] + bias[r]): one layer's activation, which also keeps values bounded
// however many layers there are.
cudaError_t LaunchBiasTanh(float* y, const float* bias, int rows, int cols, cudaStream_t stream);
// sums[c] = sum over r of y[r, c], in a fixed order (the result is the same on every run).
cudaError_t LaunchColumnSums(const float* y, int rows, int cols, float* sums, cudaStream_t stream);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_MODEL_KERNELS_H_
