// The synthetic model a request runs: `layers` x (GEMM with an H x H weight matrix, then bias +
// tanh) over an H x B input derived from the request's id, then the B column sums copied to the
// host. The weights are shared by all workers (read only); each worker has a ModelReplica with its
// own stream, cuBLAS handle and buffers, so workers run concurrently on the GPU.
//
//   auto weights = ModelWeights::Create({.hidden = 4096, .batch = 256, .layers = 8});
//   auto replica = ModelReplica::Create(**weights);
//   absl::StatusOr<uint64_t> digest = (*replica)->Serve(request.id);
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_MODEL_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_MODEL_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace inference_server {

struct ModelShape {
  int hidden = 4096;
  int batch = 256;
  int layers = 8;
};

class ModelWeights {
 public:
  // Allocates and fills the weights (uniform in +-1/sqrt(hidden), from a fixed seed) and biases.
  static absl::StatusOr<std::unique_ptr<ModelWeights>> Create(const ModelShape& shape);
  ~ModelWeights();
  ModelWeights(const ModelWeights&) = delete;
  ModelWeights& operator=(const ModelWeights&) = delete;

  const ModelShape& shape() const { return shape_; }
  const float* weight(int layer) const;  // hidden x hidden
  const float* bias(int layer) const;    // hidden

 private:
  explicit ModelWeights(const ModelShape& shape) : shape_(shape) {}
  ModelShape shape_;
  float* weights_ = nullptr;
  float* biases_ = nullptr;
};

class ModelReplica {
 public:
  static absl::StatusOr<std::unique_ptr<ModelReplica>> Create(const ModelWeights& weights);
  ~ModelReplica();
  ModelReplica(const ModelReplica&) = delete;
  ModelReplica& operator=(const ModelReplica&) = delete;

  // Runs one request whose input is derived from `input_seed`, and returns once its result is on
  // the host: a digest (FNV-1a) of the result's bytes, the same on every run for the same seed.
  absl::StatusOr<uint64_t> Serve(uint64_t input_seed);

 private:
  explicit ModelReplica(const ModelWeights& weights) : weights_(weights) {}
  const ModelWeights& weights_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  float* activations_[2] = {nullptr, nullptr};  // hidden x batch each, used in turn
  float* column_sums_ = nullptr;                // batch, on the device
  float* result_ = nullptr;                     // batch, pinned host memory
};

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_MODEL_H_
