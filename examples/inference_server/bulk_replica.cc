#include "examples/inference_server/bulk_replica.h"

#include <cuda_runtime.h>  // the typed cudaMalloc

#include <cmath>

#include "examples/inference_server/bulk_kernels.h"
#include "examples/inference_server/cuda_status.h"

namespace inference_server {

absl::StatusOr<std::unique_ptr<BulkReplica>> BulkReplica::Create(double kernel_us) {
  std::unique_ptr<BulkReplica> r(new BulkReplica(static_cast<uint64_t>(std::llround(kernel_us * 1000))));
  absl::Status st = CudaStatus(BulkSpinResidentBlocks(&r->blocks_), "bulk_spin_kernel occupancy");
  if (st.ok() && r->blocks_ <= 0) st = absl::InternalError("bulk_spin_kernel: no block fits on an SM");
  // Non-blocking, like the chat workers' streams: the bulk kernels contend with the chat
  // requests' kernels for SMs, never through implicit synchronization with the default stream.
  if (st.ok()) st = CudaStatus(cudaStreamCreateWithFlags(&r->stream_, cudaStreamNonBlocking), "cudaStreamCreate(bulk)");
  if (st.ok()) st = CudaStatus(cudaMalloc(&r->sink_, size_t(r->blocks_) * sizeof(uint64_t)), "cudaMalloc(bulk sink)");
  if (!st.ok()) return st;
  return r;
}

BulkReplica::~BulkReplica() {
  cudaFree(sink_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

absl::Status BulkReplica::Serve() {
  absl::Status st = CudaStatus(LaunchBulkSpin(blocks_, spin_ns_, sink_, stream_), "bulk_spin_kernel");
  if (st.ok()) st = CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize(bulk)");
  return st;
}

}  // namespace inference_server
