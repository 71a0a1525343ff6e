// Theoretical occupancy of a kernel launch: how many warps one SM can hold at once, from the launch
// configuration and the device limits in the trace header, the way the hardware allocates
// resources on compute capability 7.x to 10.x.
//
// Each resource gives a number of resident blocks per SM; the smallest wins:
//   registers      registers per thread are rounded up to a multiple of 8 (256 per warp, the
//                  allocation unit); the register file is split evenly between the SM's 4
//                  sub-partitions and a warp's registers live in one of them, so warps per SM are
//                  4 x (registers per sub-partition / registers per warp), then divided by the
//                  block's warps. A block whose registers exceed the per-block limit (with its
//                  warps rounded up to a multiple of 4, as the hardware checks) or more than 255
//                  registers per thread cannot launch.
//   shared memory  static + dynamic + the per-block system reservation (1 KiB from 8.0), rounded
//                  up to the allocation unit (256 B on 7.x, 128 B from 8.0), against the SM's
//                  shared memory; more than the per-block opt-in maximum cannot launch.
//   warps          the SM's warp slots divided by the block's warps (threads rounded up to whole
//                  warps): the block-size limit.
//   blocks         the SM's resident-block limit.
//
// The results mean what Nsight Compute's launch metrics mean:
//   blocks_by_registers       launch__occupancy_limit_registers
//   blocks_by_shared_memory   launch__occupancy_limit_shared_mem (see below)
//   blocks_by_warps           launch__occupancy_limit_warps
//   blocks_by_block_limit     launch__occupancy_limit_blocks
//   active_warps_per_sm       sm__maximum_warps_avg_per_active_cycle
//   occupancy_pct             sm__maximum_warps_per_active_cycle_pct
//
// One difference: ncu divides by the shared-memory carveout the driver configured for the launch,
// which the trace does not record; this divides by the SM's full shared memory (the largest
// carveout). The driver sizes the carveout so that shared memory does not cost occupancy the full
// carveout would give, so the occupancy and the limiter agree with ncu; but for a kernel using
// little shared memory blocks_by_shared_memory can be larger than ncu's number (which divides by a
// small carveout), and in both it is then not the limit. A kernel that pins a
// smaller carveout (cudaFuncAttributePreferredSharedMemoryCarveout) can have lower occupancy than
// computed here.
//
// Thread-block clusters (compute capability 9.0+) are placed a cluster at a time within a GPC,
// which can lower the achievable occupancy below this per-SM figure; the result only notes them.
#ifndef CUSCOPE_LIB_ANALYSIS_OCCUPANCY_H_
#define CUSCOPE_LIB_ANALYSIS_OCCUPANCY_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::analysis {

struct LaunchConfig {
  uint32_t block_x = 1, block_y = 1, block_z = 1;
  uint32_t registers_per_thread = 0;
  uint64_t static_shared_memory = 0;
  uint64_t dynamic_shared_memory = 0;
  uint32_t cluster_x = 0, cluster_y = 0, cluster_z = 0;  // 0: not a cluster launch
  uint64_t threads_per_block() const { return uint64_t{block_x} * block_y * block_z; }
  bool cluster() const { return cluster_x * std::max(1u, cluster_y) * std::max(1u, cluster_z) > 1; }
};

// The limit that sets the occupancy. kNone: the SM's warp slots are all used (100%), so nothing
// limits it.
enum class OccupancyLimiter { kNone, kRegisters, kSharedMemory, kWarps, kBlocks };
// "registers", "shared memory", "block size (warps)", "blocks per SM", "none".
std::string_view OccupancyLimiterName(OccupancyLimiter limiter);

// blocks_by_* of a resource the block does not use (no registers reported, no shared memory on
// 7.x, which reserves none): it sets no limit. TheoreticalOccupancy refuses per-SM limits large
// enough to give this value as a real count, so it never means anything else.
inline constexpr uint32_t kNoBlockLimit = UINT32_MAX;

struct Occupancy {
  uint32_t warps_per_block = 0;
  uint32_t registers_per_warp = 0;        // as allocated (granularity applied)
  uint64_t shared_memory_per_block = 0;   // as allocated: reservation and granularity applied
  uint32_t blocks_by_registers = 0;
  uint32_t blocks_by_shared_memory = 0;
  uint32_t blocks_by_warps = 0;
  uint32_t blocks_by_block_limit = 0;
  uint32_t blocks_per_sm = 0;  // the smallest of the four
  uint32_t active_warps_per_sm = 0;
  uint32_t max_warps_per_sm = 0;
  double occupancy_pct = 0;  // active / max warps, in percent
  OccupancyLimiter limiter = OccupancyLimiter::kNone;
  // Every resource that gives exactly blocks_per_sm (a tie names more than one), as bits
  // 1 << OccupancyLimiter; kNone never set.
  uint32_t limiter_mask = 0;
  bool cluster_launch = false;
  // Set when the block cannot be resident at all (blocks_per_sm 0): what is over its limit.
  std::string_view not_launchable;
};

// "registers", or for a tie "registers and shared memory"; "none" when nothing limits.
std::string LimiterNames(const Occupancy& occupancy);

// Fails (InvalidArgument) when the device lacks the limits the calculation needs (a trace header
// without device properties) or the compute capability is older than 7.0 or the block is empty.
absl::StatusOr<Occupancy> TheoreticalOccupancy(const LaunchConfig& launch, const v1::Device& device);

// Shared memory reserved per block: the header's value, or 1 KiB from compute capability 8.0 when
// the header predates the field (0).
uint64_t ReservedSharedMemoryPerBlock(const v1::Device& device);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_OCCUPANCY_H_
