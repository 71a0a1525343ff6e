// The "bulk" route's one kernel, bulk_spin_kernel: a grid as large as the device holds at once,
// each block holding its SM for a fixed time. A chat request's kernels launched meanwhile (on any
// other stream) find no room and queue on the GPU behind it: the interference a batch job that
// shares the GPU causes a latency-bound route.
#ifndef CUSCOPE_EXAMPLES_INFERENCE_SERVER_BULK_KERNELS_H_
#define CUSCOPE_EXAMPLES_INFERENCE_SERVER_BULK_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace inference_server {

// The blocks of bulk_spin_kernel the current device holds at once: its SMs times the blocks of
// the kernel's size one SM holds (cudaOccupancyMaxActiveBlocksPerMultiprocessor). A grid of that
// many fills every SM in one wave.
cudaError_t BulkSpinResidentBlocks(int* blocks);

// Enqueues bulk_spin_kernel on `stream`: `blocks` blocks, each spinning for `spin_ns` nanoseconds
// once it runs, then writing how many times it spun to sink[its block] (`sink` holds `blocks`
// values, and nothing else reads or writes them).
cudaError_t LaunchBulkSpin(int blocks, uint64_t spin_ns, uint64_t* sink, cudaStream_t stream);

}  // namespace inference_server

#endif  // CUSCOPE_EXAMPLES_INFERENCE_SERVER_BULK_KERNELS_H_
