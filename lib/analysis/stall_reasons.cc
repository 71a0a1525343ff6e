#include "lib/analysis/stall_reasons.h"

#include <array>

namespace cuscope::analysis {
namespace {

constexpr std::array<StallReasonInfo, 19> kStalls = {{
    {"long_scoreboard",
     "waiting for data from the L1TEX path: global, local, texture or surface memory loads that have not "
     "returned yet",
     "make memory accesses coalesced and cache-friendly, reuse data through shared memory or registers instead "
     "of reloading it, issue independent loads earlier (prefetch, software pipelining), and keep enough warps "
     "or independent work per thread in flight to cover the latency; check for register spills to local memory"},
    {"short_scoreboard",
     "waiting for a result from the MIO unit: a shared-memory load, a special-function operation (sin, exp, "
     "rsqrt) or a warp shuffle",
     "remove shared-memory bank conflicts (pad or swizzle the layout), use fewer special-function operations, "
     "and put independent work between the access and the use of its result"},
    {"mio_throttle",
     "the queue into the MIO unit is full: too many shared-memory, special-function or shuffle instructions "
     "back to back",
     "issue fewer and wider shared-memory accesses (vector loads), remove bank conflicts, and mix in other "
     "instructions between them"},
    {"lg_throttle",
     "the queue for local and global memory instructions is full: many separate small memory instructions",
     "use wider loads and stores (float4, vectorized access), combine accesses, and remove local-memory traffic "
     "from register spills or dynamically indexed local arrays"},
    {"math_pipe_throttle",
     "the arithmetic pipe the warp needs is busy with earlier instructions: that pipe is saturated",
     "the math itself is the limit: move the work to a faster pipe (tensor cores, lower precision, fused "
     "multiply-add), remove redundant arithmetic, or balance work across pipes (e.g. integer vs. floating point)"},
    {"wait",
     "a fixed-latency dependency: the next instruction needs the result of a recent arithmetic instruction",
     "give each thread more independent instructions (unroll, process several elements per thread) so the "
     "scheduler has something to issue while results are produced"},
    {"barrier",
     "waiting at a block-wide barrier (__syncthreads) for the other warps of the block",
     "balance the work between the warps of a block, use fewer barriers or smaller blocks, and replace "
     "block-wide synchronization with warp-level primitives where the data allows it"},
    {"membar",
     "waiting for a memory fence to complete",
     "remove fences that are not needed and use the narrowest scope that is correct (block instead of device "
     "or system)"},
    {"not_selected",
     "ready to issue, but the scheduler picked another ready warp",
     "not a problem: the scheduler always had work; occupancy could even be lowered without loss", false},
    {"selected",
     "issuing an instruction (the cycle in which the warp was picked)",
     "not a stall", false},
    {"no_instruction",
     "no instruction fetched yet: an instruction-cache miss or the gap after a jump",
     "make the hot loop's code smaller (less unrolling and inlining of large functions) and avoid jumping "
     "between distant code"},
    {"branch_resolving",
     "waiting for a branch target to be computed or for the warp's threads to reconverge",
     "reduce divergent branches within a warp and let the compiler predicate short conditional code"},
    {"dispatch_stall",
     "the instruction was picked but could not be dispatched to its pipe (a pipeline conflict)",
     "usually small and outside the program's control; if large, look for unusual instruction mixes"},
    {"drain",
     "waiting after the warp's last instruction for its memory stores to drain",
     "usually small; large values mean many stores at the end of the kernel: spread them out or write less"},
    {"imc_miss",
     "waiting for a constant-cache miss: __constant__ data read for the first time or with different "
     "addresses across the warp",
     "read constant memory with the same address across a warp, or move per-thread tables to global or shared "
     "memory"},
    {"sleeping",
     "the warp is asleep (nanosleep) or yielded",
     "check spin-wait loops with back-off: they can hold warps idle"},
    {"tex_throttle",
     "the queue into the texture unit is full",
     "issue fewer texture fetches, or move data that needs no filtering to plain global loads"},
    {"misc",
     "a miscellaneous hardware reason",
     "rarely actionable"},
    {"gmma",
     "waiting for a warpgroup matrix-multiply (Hopper wgmma) to finish or for its resources",
     "the tensor-core pipeline is busy: overlap more loads with the matrix math (deeper pipelining) or use a "
     "tile shape that keeps it fed"},
}};

constexpr StallReasonInfo kUnknown = {"unknown", "a stall reason this version of cuscope does not describe",
                                      "see the Nsight Compute documentation for this reason"};

}  // namespace

const StallReasonInfo& DescribeStall(std::string_view reason) {
  for (const StallReasonInfo& info : kStalls) {
    if (info.reason == reason) return info;
  }
  return kUnknown;
}

}  // namespace cuscope::analysis
