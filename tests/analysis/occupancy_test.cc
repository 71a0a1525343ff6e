// Theoretical occupancy against configurations whose answer is known (the CUDA occupancy rules,
// as ncu's launch__occupancy_limit_* metrics report them), and the edges of each rule.
#include "lib/analysis/occupancy.h"

#include "gtest/gtest.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::H200Device;

LaunchConfig Block(uint32_t threads, uint32_t registers, uint64_t dynamic_smem = 0, uint64_t static_smem = 0) {
  LaunchConfig c;
  c.block_x = threads;
  c.registers_per_thread = registers;
  c.dynamic_shared_memory = dynamic_smem;
  c.static_shared_memory = static_smem;
  return c;
}

Occupancy On(const v1::Device& device, const LaunchConfig& launch) {
  auto o = TheoreticalOccupancy(launch, device);
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? *o : Occupancy();
}

Occupancy OnH200(const LaunchConfig& launch) { return On(H200Device(), launch); }

uint32_t Bit(OccupancyLimiter l) { return 1u << static_cast<int>(l); }

// A V100: compute capability 7.0, 96 KiB of shared memory per SM, no per-block reservation.
v1::Device V100() {
  v1::Device d = H200Device();
  d.set_compute_capability_major(7);
  d.set_sm_count(80);
  d.set_shared_memory_per_sm(98304);
  d.set_max_shared_memory_per_block(98304);
  d.set_reserved_shared_memory_per_block(0);
  return d;
}

// Per-SM limits no GPU has are a damaged header, not a calculation: one of them could otherwise
// give a block count equal to kNoBlockLimit, which means "no limit".
TEST(OccupancyTest, ImplausiblePerSmLimitsAreRefused) {
  for (int field = 0; field < 4; ++field) {
    v1::Device d = H200Device();
    if (field == 0) d.set_max_blocks_per_sm(UINT32_MAX);
    if (field == 1) d.set_max_warps_per_sm(1u << 20);
    if (field == 2) d.set_registers_per_sm(UINT32_MAX);
    if (field == 3) d.set_shared_memory_per_sm(uint64_t{1} << 40);
    auto o = TheoreticalOccupancy(Block(256, 32), d);
    ASSERT_FALSE(o.ok()) << field;
    EXPECT_EQ(o.status().message(), "the trace header's per-SM limits are not plausible");
  }
}

TEST(OccupancyTest, SmallRegisterFootprintFillsTheSm) {
  const Occupancy o = OnH200(Block(256, 32));
  EXPECT_EQ(o.warps_per_block, 8u);
  EXPECT_EQ(o.blocks_by_registers, 8u);   // 1024 registers per warp: 16 warps per sub-partition
  EXPECT_EQ(o.blocks_by_warps, 8u);
  EXPECT_EQ(o.blocks_by_block_limit, 32u);
  EXPECT_EQ(o.blocks_by_shared_memory, 228u);  // only the 1 KiB reservation: 233472 / 1024
  EXPECT_EQ(o.blocks_per_sm, 8u);
  EXPECT_EQ(o.active_warps_per_sm, 64u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 100.0);
  // Registers and block size run out together, but a full SM has nothing limiting it.
  EXPECT_EQ(o.limiter, OccupancyLimiter::kNone);
  EXPECT_EQ(o.limiter_mask, Bit(OccupancyLimiter::kRegisters) | Bit(OccupancyLimiter::kWarps));
}

TEST(OccupancyTest, HeavyRegisterUseLimitsToAQuarter) {
  const Occupancy o = OnH200(Block(256, 128));
  EXPECT_EQ(o.registers_per_warp, 4096u);
  EXPECT_EQ(o.blocks_by_registers, 2u);
  EXPECT_EQ(o.active_warps_per_sm, 16u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 25.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kRegisters);
  EXPECT_EQ(OccupancyLimiterName(o.limiter), "registers");
  EXPECT_EQ(LimiterNames(o), "registers");
}

TEST(OccupancyTest, ATieBelowFullOccupancyNamesBothLimiters) {
  // Hopper GEMM shape (ncu on the H200: registers 1, shared memory 1, 18.75%): 384 threads with 168
  // registers and 188636 B of dynamic shared memory.
  const Occupancy o = OnH200(Block(384, 168, 188636));
  EXPECT_EQ(o.blocks_by_registers, 1u);
  EXPECT_EQ(o.blocks_by_shared_memory, 1u);
  EXPECT_EQ(o.blocks_by_warps, 5u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 18.75);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kRegisters);
  EXPECT_EQ(LimiterNames(o), "registers and shared memory");
  EXPECT_EQ(LimiterNames(OnH200(Block(256, 32))), "none");
}

TEST(OccupancyTest, RegistersRoundUpToEightPerThread) {
  // 33 registers are allocated as 40: 1280 per warp, 12 warps per sub-partition, 48 per SM.
  const Occupancy o = OnH200(Block(256, 33));
  EXPECT_EQ(o.registers_per_warp, 1280u);
  EXPECT_EQ(o.blocks_by_registers, 6u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 75.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kRegisters);
  // 32 registers need no rounding and fill the SM (the control).
  EXPECT_DOUBLE_EQ(OnH200(Block(256, 32)).occupancy_pct, 100.0);
}

TEST(OccupancyTest, RegistersAreSplitBetweenTheFourSubPartitions) {
  // 144 registers: 4608 per warp. The whole register file would hold 14 warps, but each quarter
  // holds only 3, so 12 warps per SM: 6 blocks of 2 warps, not 7.
  const Occupancy o = OnH200(Block(64, 144));
  EXPECT_EQ(o.blocks_by_registers, 6u);
  EXPECT_EQ(o.active_warps_per_sm, 12u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 18.75);
}

TEST(OccupancyTest, RegistersPerBlockLimit) {
  // 1024 threads x 64 registers is exactly 65536 per block: launchable, one block.
  const Occupancy fits = OnH200(Block(1024, 64));
  EXPECT_EQ(fits.blocks_by_registers, 1u);
  EXPECT_DOUBLE_EQ(fits.occupancy_pct, 50.0);
  EXPECT_EQ(fits.limiter, OccupancyLimiter::kRegisters);
  // 72 registers: 73728 per block, over the limit: nothing fits.
  const Occupancy over = OnH200(Block(1024, 72));
  EXPECT_EQ(over.blocks_per_sm, 0u);
  EXPECT_DOUBLE_EQ(over.occupancy_pct, 0.0);
  EXPECT_EQ(over.not_launchable, "registers per block over the device limit");
  EXPECT_EQ(OnH200(Block(32, 256)).not_launchable, "registers per thread over 255");
  EXPECT_TRUE(OnH200(Block(32, 255)).not_launchable.empty());
}

TEST(OccupancyTest, SharedMemoryLimited) {
  // 256 threads with 100 KiB of dynamic shared memory: 102400 + 1024 reserved = 103424 B per block,
  // two blocks in 228 KiB: 16 of 64 warps.
  const Occupancy o = OnH200(Block(256, 32, 100 * 1024));
  EXPECT_EQ(o.shared_memory_per_block, 103424u);
  EXPECT_EQ(o.blocks_by_shared_memory, 2u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 25.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kSharedMemory);
  // 1024-thread blocks with 120 KiB: one block, half the SM.
  const Occupancy big = OnH200(Block(1024, 32, 120 * 1024));
  EXPECT_EQ(big.blocks_by_shared_memory, 1u);
  EXPECT_DOUBLE_EQ(big.occupancy_pct, 50.0);
  EXPECT_EQ(big.limiter, OccupancyLimiter::kSharedMemory);
}

TEST(OccupancyTest, SharedMemoryAndBlockSizeTie) {
  // 1024 threads with 100 KiB: shared memory allows 2 blocks, and so does the block size (32 warps
  // each): the SM is full, both are at their limit, neither lowers occupancy.
  const Occupancy o = OnH200(Block(1024, 32, 100 * 1024));
  EXPECT_EQ(o.blocks_by_shared_memory, 2u);
  EXPECT_EQ(o.blocks_by_warps, 2u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 100.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kNone);
  EXPECT_EQ(o.limiter_mask, Bit(OccupancyLimiter::kSharedMemory) | Bit(OccupancyLimiter::kWarps) |
                                Bit(OccupancyLimiter::kRegisters));
}

TEST(OccupancyTest, SharedMemoryGranularityAndReservation) {
  // One byte of static shared memory costs 1025 B, allocated as 1152 (128 B units from 8.0).
  EXPECT_EQ(OnH200(Block(32, 32, 0, 1)).shared_memory_per_block, 1152u);
  // On 7.0 there is no reservation and the unit is 256 B; no shared memory sets no limit.
  EXPECT_EQ(On(V100(), Block(32, 32, 0, 1)).shared_memory_per_block, 256u);
  EXPECT_EQ(On(V100(), Block(256, 32)).blocks_by_shared_memory, kNoBlockLimit);
  // Over the opt-in maximum per block: not launchable.
  const Occupancy over = OnH200(Block(256, 32, 232449));
  EXPECT_EQ(over.blocks_per_sm, 0u);
  EXPECT_EQ(over.not_launchable, "shared memory per block over the device's opt-in maximum");
  EXPECT_EQ(OnH200(Block(256, 32, 232448)).blocks_by_shared_memory, 1u);
}

TEST(OccupancyTest, OldHeaderWithoutReservationAssumesOneKibFromAmpere) {
  v1::Device a100 = H200Device();
  a100.set_compute_capability_major(8);
  a100.set_shared_memory_per_sm(167936);  // 164 KiB
  a100.set_reserved_shared_memory_per_block(0);
  EXPECT_EQ(ReservedSharedMemoryPerBlock(a100), 1024u);
  // 40961 B + 1 KiB reserved rounds to 42112: 3 blocks; without the reservation 4 would fit.
  EXPECT_EQ(On(a100, Block(128, 32, 40961)).blocks_by_shared_memory, 3u);
  EXPECT_EQ(ReservedSharedMemoryPerBlock(V100()), 0u);
}

TEST(OccupancyTest, TinyBlocksHitTheBlocksPerSmLimit) {
  const Occupancy o = OnH200(Block(32, 32));
  EXPECT_EQ(o.blocks_by_block_limit, 32u);
  EXPECT_EQ(o.blocks_per_sm, 32u);
  EXPECT_EQ(o.active_warps_per_sm, 32u);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 50.0);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kBlocks);
  // 64-thread blocks reach 64 warps with the same 32 blocks.
  EXPECT_DOUBLE_EQ(OnH200(Block(64, 32)).occupancy_pct, 100.0);
}

TEST(OccupancyTest, BlockSizeThatDoesNotDivideTheWarpSlots) {
  // 96 threads = 3 warps: 21 blocks use 63 of 64 warp slots. (With 16 registers per thread the
  // register file holds 42 such blocks; at 32 it would tie with the block size at 21.)
  const Occupancy o = OnH200(Block(96, 16));
  EXPECT_EQ(o.blocks_by_warps, 21u);
  EXPECT_EQ(o.active_warps_per_sm, 63u);
  EXPECT_NEAR(o.occupancy_pct, 98.4375, 1e-9);
  EXPECT_EQ(o.limiter, OccupancyLimiter::kWarps);
  // A partial warp counts as a whole one: 33 threads take 2 warps.
  EXPECT_EQ(OnH200(Block(33, 32)).warps_per_block, 2u);
  EXPECT_EQ(OnH200(Block(1025, 32)).not_launchable, "threads per block over the device limit");
}

TEST(OccupancyTest, MultiDimensionalBlocksAndClusters) {
  LaunchConfig c = Block(16, 32);
  c.block_y = 16;  // 256 threads
  c.cluster_x = 2;
  const Occupancy o = OnH200(c);
  EXPECT_EQ(o.warps_per_block, 8u);
  EXPECT_TRUE(o.cluster_launch);
  EXPECT_FALSE(OnH200(Block(256, 32)).cluster_launch);
}

TEST(OccupancyTest, MissingLimitsOrOldArchitecturesAreRefused) {
  v1::Device empty;
  EXPECT_FALSE(TheoreticalOccupancy(Block(256, 32), empty).ok());
  v1::Device pascal = H200Device();
  pascal.set_compute_capability_major(6);
  const auto refused = TheoreticalOccupancy(Block(256, 32), pascal);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("6.0"), std::string::npos);
  v1::Device no_registers = H200Device();
  no_registers.set_registers_per_sm(0);
  EXPECT_FALSE(TheoreticalOccupancy(Block(256, 32), no_registers).ok());
  EXPECT_FALSE(TheoreticalOccupancy(Block(0, 32), H200Device()).ok());
}

}  // namespace
}  // namespace cuscope::analysis
