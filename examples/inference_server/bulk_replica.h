// A "bulk" worker's share of the GPU: its own stream and the output of its kernels. One bulk
// request is one bulk_spin_kernel over the whole device (bulk_kernels.h), `kernel_us` long,
// waited for on the host; it reads nothing and writes only this replica's buffer, so the chat
// route's results (and the verification checksum) are the same with and without it.
//
//   auto bulk = BulkReplica::Create(/*kernel_us=*/2000);
//   absl::Status st = (*bulk)->Serve();
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_BULK_REPLICA_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_BULK_REPLICA_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace inference_server {

// Bulk requests' ids have the high bit set, so they never meet the chat route's 0, 1, 2, ...
inline constexpr uint64_t kBulkRequestIdBit = uint64_t{1} << 63;

class BulkReplica {
 public:
  static absl::StatusOr<std::unique_ptr<BulkReplica>> Create(double kernel_us);
  ~BulkReplica();
  BulkReplica(const BulkReplica&) = delete;
  BulkReplica& operator=(const BulkReplica&) = delete;

  // Runs one bulk request and returns once its kernel has finished.
  absl::Status Serve();

  // The kernel's grid: every block the device holds at once.
  int blocks() const { return blocks_; }

 private:
  explicit BulkReplica(uint64_t spin_ns) : spin_ns_(spin_ns) {}
  const uint64_t spin_ns_;
  int blocks_ = 0;
  cudaStream_t stream_ = nullptr;
  uint64_t* sink_ = nullptr;  // blocks_ values on the device
};

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_BULK_REPLICA_H_
