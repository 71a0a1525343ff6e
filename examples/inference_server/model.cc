#include "examples/inference_server/model.h"

#include <cmath>
#include <utility>

#include "examples/inference_server/cuda_status.h"
#include "examples/inference_server/model_kernels.h"

namespace inference_server {
namespace {

// Fixed, so that every run computes with the same weights.
constexpr uint64_t kWeightSeed = 0x3e1647;
constexpr uint64_t kBiasSeed = 0xb1a5;

size_t Elements(int rows, int cols) { return size_t(rows) * size_t(cols); }

uint64_t Fnv1a(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelWeights>> ModelWeights::Create(const ModelShape& shape) {
  std::unique_ptr<ModelWeights> w(new ModelWeights(shape));
  const size_t weight_count = Elements(shape.hidden, shape.hidden) * shape.layers;
  const size_t bias_count = Elements(shape.hidden, shape.layers);
  absl::Status st = CudaStatus(cudaMalloc(&w->weights_, weight_count * sizeof(float)), "cudaMalloc(weights)");
  if (st.ok()) st = CudaStatus(cudaMalloc(&w->biases_, bias_count * sizeof(float)), "cudaMalloc(biases)");
  // Scaled by 1/sqrt(hidden) so that a layer's outputs stay of the order of its inputs.
  const float scale = 1.0f / std::sqrt(float(shape.hidden));
  if (st.ok()) {
    st = CudaStatus(LaunchFillPseudoRandom(w->weights_, weight_count, kWeightSeed, scale, nullptr),
                    "fill weights kernel");
  }
  if (st.ok()) {
    st = CudaStatus(LaunchFillPseudoRandom(w->biases_, bias_count, kBiasSeed, 0.1f, nullptr), "fill biases kernel");
  }
  if (st.ok()) st = CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after filling weights)");
  if (!st.ok()) return st;
  return w;
}

ModelWeights::~ModelWeights() {
  cudaFree(weights_);
  cudaFree(biases_);
}

const float* ModelWeights::weight(int layer) const {
  return weights_ + Elements(shape_.hidden, shape_.hidden) * layer;
}

const float* ModelWeights::bias(int layer) const { return biases_ + Elements(shape_.hidden, layer); }

absl::StatusOr<std::unique_ptr<ModelReplica>> ModelReplica::Create(const ModelWeights& weights) {
  std::unique_ptr<ModelReplica> r(new ModelReplica(weights));
  const ModelShape& s = weights.shape();
  const size_t activation_bytes = Elements(s.hidden, s.batch) * sizeof(float);
  absl::Status st = CudaStatus(cudaStreamCreateWithFlags(&r->stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  if (st.ok()) st = CublasStatus(cublasCreate(&r->cublas_), "cublasCreate");
  if (st.ok()) st = CublasStatus(cublasSetStream(r->cublas_, r->stream_), "cublasSetStream");
  for (float*& a : r->activations_) {
    if (st.ok()) st = CudaStatus(cudaMalloc(&a, activation_bytes), "cudaMalloc(activations)");
  }
  if (st.ok()) st = CudaStatus(cudaMalloc(&r->column_sums_, s.batch * sizeof(float)), "cudaMalloc(column sums)");
  if (st.ok()) st = CudaStatus(cudaMallocHost(&r->result_, s.batch * sizeof(float)), "cudaMallocHost(result)");
  if (!st.ok()) return st;
  return r;
}

ModelReplica::~ModelReplica() {
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  for (float* a : activations_) cudaFree(a);
  cudaFree(column_sums_);
  cudaFreeHost(result_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

absl::StatusOr<uint64_t> ModelReplica::Serve(uint64_t input_seed) {
  const ModelShape& s = weights_.shape();
  float* x = activations_[0];
  float* y = activations_[1];
  absl::Status st =
      CudaStatus(LaunchFillPseudoRandom(x, Elements(s.hidden, s.batch), input_seed, 1.0f, stream_), "input kernel");
  const float one = 1.0f, zero = 0.0f;
  for (int layer = 0; layer < s.layers && st.ok(); ++layer) {
    st = CublasStatus(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, s.hidden, s.batch, s.hidden, &one,
                                  weights_.weight(layer), s.hidden, x, s.hidden, &zero, y, s.hidden),
                      "cublasSgemm");
    if (st.ok()) st = CudaStatus(LaunchBiasTanh(y, weights_.bias(layer), s.hidden, s.batch, stream_), "bias+tanh kernel");
    std::swap(x, y);
  }
  if (st.ok()) st = CudaStatus(LaunchColumnSums(x, s.hidden, s.batch, column_sums_, stream_), "column sums kernel");
  if (st.ok()) {
    st = CudaStatus(cudaMemcpyAsync(result_, column_sums_, s.batch * sizeof(float), cudaMemcpyDeviceToHost, stream_),
                    "cudaMemcpyAsync(result to host)");
  }
  if (st.ok()) st = CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  if (!st.ok()) return st;
  return Fnv1a(result_, s.batch * sizeof(float));
}

}  // namespace inference_server
