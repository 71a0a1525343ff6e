#include "lib/analysis/occupancy.h"

#include <algorithm>
#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cuscope::analysis {
namespace {

// Registers are handed to warps in units of 256 (8 per thread of a 32-thread warp).
constexpr uint64_t kRegisterAllocationUnit = 256;
// Every SM since Volta has 4 sub-partitions (one warp scheduler each); a warp's registers come
// from its own sub-partition's quarter of the register file.
constexpr uint64_t kSubPartitions = 4;
// The most registers one thread can address.
constexpr uint32_t kMaxRegistersPerThread = 255;

// Per-SM limits no GPU comes near, each 64 times or more today's largest.
constexpr uint64_t kMaxPlausibleWarpsPerSm = 4096;
constexpr uint64_t kMaxPlausibleBlocksPerSm = 4096;
constexpr uint64_t kMaxPlausibleRegistersPerSm = uint64_t{1} << 24;
constexpr uint64_t kMaxPlausibleSharedMemoryPerSm = uint64_t{1} << 32;

uint64_t RoundUp(uint64_t value, uint64_t unit) { return unit == 0 ? value : (value + unit - 1) / unit * unit; }

uint32_t Clamp32(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, kNoBlockLimit)); }

// Shared memory is carved out for a block in these units.
uint64_t SharedMemoryAllocationUnit(const v1::Device& device) {
  return device.compute_capability_major() >= 8 ? 128 : 256;
}

}  // namespace

std::string_view OccupancyLimiterName(OccupancyLimiter limiter) {
  switch (limiter) {
    case OccupancyLimiter::kNone: return "none";
    case OccupancyLimiter::kRegisters: return "registers";
    case OccupancyLimiter::kSharedMemory: return "shared memory";
    case OccupancyLimiter::kWarps: return "block size (warps)";
    case OccupancyLimiter::kBlocks: return "blocks per SM";
  }
  return "none";
}

std::string LimiterNames(const Occupancy& occupancy) {
  if (occupancy.limiter == OccupancyLimiter::kNone) return "none";
  std::string out;
  for (OccupancyLimiter l : {OccupancyLimiter::kRegisters, OccupancyLimiter::kSharedMemory, OccupancyLimiter::kWarps,
                             OccupancyLimiter::kBlocks}) {
    if ((occupancy.limiter_mask & (1u << static_cast<int>(l))) == 0) continue;
    absl::StrAppend(&out, out.empty() ? "" : " and ", std::string(OccupancyLimiterName(l)));
  }
  return out.empty() ? std::string(OccupancyLimiterName(occupancy.limiter)) : out;
}

uint64_t ReservedSharedMemoryPerBlock(const v1::Device& device) {
  if (device.reserved_shared_memory_per_block() > 0) return device.reserved_shared_memory_per_block();
  // Traces written before the header carried the reservation: the driver has reserved 1 KiB per
  // block for its own use on every architecture since Ampere.
  return device.compute_capability_major() >= 8 ? 1024 : 0;
}

absl::StatusOr<Occupancy> TheoreticalOccupancy(const LaunchConfig& launch, const v1::Device& device) {
  if (device.compute_capability_major() == 0) {
    return absl::InvalidArgumentError("the trace header has no compute capability for this device");
  }
  if (device.compute_capability_major() < 7) {
    return absl::InvalidArgumentError(absl::StrCat("compute capability ", device.compute_capability_major(), ".",
                                                   device.compute_capability_minor(),
                                                   " predates the allocation rules implemented (7.0 and later)"));
  }
  const uint64_t warp_size = device.warp_size() > 0 ? device.warp_size() : 32;
  if (warp_size > 1024) return absl::InvalidArgumentError("the trace header's warp size is not plausible");
  const uint64_t max_warps =
      device.max_warps_per_sm() > 0 ? device.max_warps_per_sm() : device.max_threads_per_sm() / warp_size;
  if (max_warps == 0 || device.max_blocks_per_sm() == 0 || device.registers_per_sm() == 0 ||
      device.shared_memory_per_sm() == 0) {
    return absl::InvalidArgumentError(
        "the trace header lacks the device's per-SM limits (warps, blocks, registers, shared memory)");
  }
  // Limits far past any GPU's (H200: 64 warps, 32 blocks, 64 Ki registers, 228 KiB of shared memory
  // per SM) are a damaged header. Bounding them also keeps every blocks_by_* below kNoBlockLimit,
  // so that value only ever means "no limit".
  if (max_warps > kMaxPlausibleWarpsPerSm || device.max_blocks_per_sm() > kMaxPlausibleBlocksPerSm ||
      device.registers_per_sm() > kMaxPlausibleRegistersPerSm ||
      device.shared_memory_per_sm() > kMaxPlausibleSharedMemoryPerSm) {
    return absl::InvalidArgumentError("the trace header's per-SM limits are not plausible");
  }
  // Block dimensions past any device's limit (1024 threads) are a damaged record; bounding them
  // keeps the arithmetic below in range.
  constexpr uint32_t kMaxDimension = 1u << 16;
  if (launch.block_x > kMaxDimension || launch.block_y > kMaxDimension || launch.block_z > kMaxDimension) {
    return absl::InvalidArgumentError("the launch's block dimensions are not plausible");
  }
  const uint64_t threads = launch.threads_per_block();
  if (threads == 0) return absl::InvalidArgumentError("the launch has an empty block");

  Occupancy o;
  o.max_warps_per_sm = static_cast<uint32_t>(max_warps);
  o.cluster_launch = launch.cluster();
  const uint64_t warps_per_block = (threads + warp_size - 1) / warp_size;
  o.warps_per_block = Clamp32(warps_per_block);

  // Block size: whole warps in the SM's warp slots; the block-count limit as given.
  o.blocks_by_warps = Clamp32(max_warps / warps_per_block);
  o.blocks_by_block_limit = device.max_blocks_per_sm();

  // Registers.
  const uint64_t regs = launch.registers_per_thread;
  if (regs == 0) {
    o.blocks_by_registers = kNoBlockLimit;
  } else if (regs > kMaxRegistersPerThread) {
    o.blocks_by_registers = 0;
    o.not_launchable = "registers per thread over 255";
  } else {
    const uint64_t per_warp = RoundUp(regs * warp_size, kRegisterAllocationUnit);
    o.registers_per_warp = Clamp32(per_warp);
    // The hardware's per-block check assumes the block's warps spread over all sub-partitions.
    const uint64_t checked_per_block = per_warp * RoundUp(warps_per_block, kSubPartitions);
    const uint64_t per_block_limit = device.max_registers_per_block();
    if (per_block_limit > 0 &&
               (checked_per_block > per_block_limit || per_warp * warps_per_block > per_block_limit)) {
      o.blocks_by_registers = 0;
      o.not_launchable = "registers per block over the device limit";
    } else {
      const uint64_t warps_per_sub_partition = device.registers_per_sm() / kSubPartitions / per_warp;
      o.blocks_by_registers = Clamp32(warps_per_sub_partition * kSubPartitions / warps_per_block);
    }
  }

  // Shared memory.
  const uint64_t user_smem = launch.static_shared_memory + launch.dynamic_shared_memory;
  const uint64_t allocated =
      RoundUp(user_smem + ReservedSharedMemoryPerBlock(device), SharedMemoryAllocationUnit(device));
  o.shared_memory_per_block = allocated;
  if (device.max_shared_memory_per_block() > 0 && user_smem > device.max_shared_memory_per_block()) {
    o.blocks_by_shared_memory = 0;
    if (o.not_launchable.empty()) o.not_launchable = "shared memory per block over the device's opt-in maximum";
  } else if (allocated == 0) {
    o.blocks_by_shared_memory = kNoBlockLimit;
  } else {
    o.blocks_by_shared_memory = Clamp32(device.shared_memory_per_sm() / allocated);
  }

  if (device.max_threads_per_block() > 0 && threads > device.max_threads_per_block()) {
    o.blocks_by_warps = 0;
    if (o.not_launchable.empty()) o.not_launchable = "threads per block over the device limit";
  }
  if (o.blocks_by_shared_memory == 0 && o.not_launchable.empty()) {
    o.not_launchable = "shared memory per block over the SM's shared memory";
  }
  if (o.blocks_by_warps == 0 && o.not_launchable.empty()) o.not_launchable = "more warps per block than an SM holds";

  // The smallest limit wins; ties are named in this order, the order ncu lists them in.
  const std::array<std::pair<OccupancyLimiter, uint32_t>, 4> limits = {{
      {OccupancyLimiter::kRegisters, o.blocks_by_registers},
      {OccupancyLimiter::kSharedMemory, o.blocks_by_shared_memory},
      {OccupancyLimiter::kWarps, o.blocks_by_warps},
      {OccupancyLimiter::kBlocks, o.blocks_by_block_limit},
  }};
  o.blocks_per_sm = kNoBlockLimit;
  for (const auto& [limiter, blocks] : limits) o.blocks_per_sm = std::min(o.blocks_per_sm, blocks);
  OccupancyLimiter first = OccupancyLimiter::kNone;
  for (const auto& [limiter, blocks] : limits) {
    if (blocks != o.blocks_per_sm) continue;
    o.limiter_mask |= 1u << static_cast<int>(limiter);
    if (first == OccupancyLimiter::kNone) first = limiter;
  }
  o.active_warps_per_sm = Clamp32(std::min<uint64_t>(uint64_t{o.blocks_per_sm} * warps_per_block, max_warps));
  o.occupancy_pct = 100.0 * static_cast<double>(o.active_warps_per_sm) / static_cast<double>(max_warps);
  // A full SM has no limiter worth naming, whichever resources happen to run out at the same time.
  o.limiter = o.active_warps_per_sm == max_warps ? OccupancyLimiter::kNone : first;
  return o;
}

}  // namespace cuscope::analysis
