#include "tests/ranks/rank_job.h"

#include <cstdint>

#include "tests/analysis/synthetic_trace.h"

namespace cuscope::testing {
namespace {

constexpr const char* kAllReduce = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
constexpr double kAllReduceUs = 1'000;

}  // namespace

std::string RankTrace(const Job& job, int r, double clock_shift_us, bool reference) {
  SyntheticTrace t;
  v1::Session* s = t.header().mutable_session();
  s->set_rank(r);
  s->set_local_rank(r);
  s->set_world_size(job.ranks);
  s->set_launcher("torchrun");
  s->set_job_id("job-7");
  s->set_host(clock_shift_us != 0 ? "node-b" : "node-a");
  s->set_boot_id(clock_shift_us != 0 ? "boot-b" : "boot-a");
  s->set_pid(1000 + r);
  if (reference) {
    s->set_clock_ref_cupti_ns(Us(clock_shift_us));
    s->set_clock_ref_realtime_ns(Us(0));
  }
  const bool late = r == job.late_rank;
  for (int step = 0; step < job.steps; ++step) {
    const double t0 = step * kRankStepUs + clock_shift_us;
    t.NvtxRange(job.step_name, t0, t0 + kRankStepUs - 100, 1);
    const double compute = kRankComputeUs + (late ? job.extra_compute_us : 0) - (r == job.early_rank ? job.early_us : 0);
    t.Launch("_Z4gemmPKfS0_Pf", t0 + 10, 5, t0 + 100, compute, 7, 1);
    double ready = t0 + 100 + compute;
    if (late && job.copy_us > 0) {
      const uint64_t corr = t.Api("cudaMemcpyAsync", ready - 50, 5);
      t.Memcpy(v1::COPY_KIND_HTOD, ready, job.copy_us, 1 << 20, true, v1::MEMORY_KIND_PINNED, 7, corr);
      ready += job.copy_us;
    }
    if (late) ready += job.host_gap_us;
    // Arrival: this rank's all-reduce kernel starts; jitter spreads the ranks a little.
    const double jitter = job.jitter_us * ((r * 7 + step * 3) % 5) / 4.0;
    // The latest arrival among the ranks, for the common end.
    double latest = t0 + 100 + kRankComputeUs + job.jitter_us;
    if (job.late_rank >= 0) latest += job.extra_compute_us + job.copy_us + job.host_gap_us;
    const double arrival = (job.overlap ? t0 + 100 + compute / 2 : ready) + jitter;
    const double end = (job.overlap ? t0 + 100 + compute / 2 + job.jitter_us : latest) + kAllReduceUs;
    if (job.payloads) {
      t.NcclCall("ncclAllReduce", arrival - 40, arrival - 5, 0x5eed, 64ull << 20, 0, 1);
    }
    const uint64_t corr = t.Api("cuLaunchKernelEx", arrival - 30, 5, 1);
    t.Kernel(kAllReduce, arrival, end - arrival, 9, corr);
  }
  return t.Write();
}

std::vector<std::string> JobTraces(const Job& job) {
  std::vector<std::string> paths;
  for (int r = 0; r < job.ranks; ++r) paths.push_back(RankTrace(job, r));
  return paths;
}

}  // namespace cuscope::testing
