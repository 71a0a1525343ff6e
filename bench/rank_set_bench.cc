// Many ranks analyzed together (`cuscope analyze rank_*.cuscope`): 1,024 generated rank traces of a
// data-parallel loop (100 NVTX steps, each a compute kernel and an NCCL all-reduce with NCCL's NVTX
// call and payload; rank 17 late by 2 ms), written once to $TMPDIR, then analyzed with 1 and 2
// workers. Run it as `build/bin/rank_set_bench`.
//
// Counters: ranks/s (items_per_second); the process's peak resident memory (getrusage ru_maxrss)
// after each benchmark and its growth over the peak before it. The first benchmark analyzes one
// trace alone: the set must stay within about that (per worker) plus the fold of the summaries.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/analysis/timeline.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace.h"
#include "lib/core/trace_writer.h"
#include "lib/ranks/rank_summary.h"
#include "lib/ranks/rank_traces.h"

namespace cuscope {
namespace {

constexpr int kRanks = 1024;
constexpr int kSteps = 100;
constexpr int kLateRank = 17;
constexpr uint64_t kT0 = 1'764'000'000'000'000'000ull;

double PeakRssMib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

std::string WriteRank(const std::string& dir, int rank) {
  const std::string path = absl::StrCat(dir, "/rank_", rank, ".cuscope");
  auto writer = core::TraceWriter::Create(path, /*overwrite=*/true);
  if (!writer.ok()) {
    std::fprintf(stderr, "rank_set_bench: %s\n", std::string(writer.status().message()).c_str());
    std::exit(1);
  }
  v1::Header header;
  header.set_format_version(1);
  v1::Session* s = header.mutable_session();
  s->set_pid(1000 + rank);
  s->set_rank(rank);
  s->set_world_size(kRanks);
  s->set_launcher("torchrun");
  s->set_host(absl::StrCat("node-", rank / 8));
  s->set_clock_ref_cupti_ns(kT0);
  s->set_clock_ref_realtime_ns(kT0);
  v1::Device* d = header.add_devices();
  d->set_id(0);
  d->set_name("NVIDIA H100");
  (void)(*writer)->WriteHeader(header);
  core::ChunkBuilder b([](v1::ApiDomain, uint32_t cbid) {
    return std::string(cbid == 211 ? "cudaLaunchKernel_v7000" : "cuLaunchKernelEx");
  });
  uint64_t corr = 1;
  const auto launch = [&](uint32_t cbid, v1::ApiDomain domain, uint64_t at) {
    core::ApiActivity a;
    a.start = at;
    a.end = at + 3'000;
    a.domain = domain;
    a.callback_id = cbid;
    a.pid = 1000 + rank;
    a.tid = 7;
    a.correlation_id = corr;
    b.Add(a);
    return corr++;
  };
  for (int step = 0; step < kSteps; ++step) {
    const uint64_t t0 = kT0 + static_cast<uint64_t>(step) * 20'000'000;
    core::NvtxActivity n;
    n.kind = v1::NVTX_KIND_RANGE_START;
    n.time = t0;
    n.id = static_cast<uint64_t>(step) * 2 + 1;
    n.pid = 1000 + rank;
    n.tid = 7;
    n.name = "step";
    b.Add(n);
    const uint64_t compute = 10'000'000 + (rank == kLateRank ? 2'000'000 : 0);
    core::KernelActivity k;
    k.correlation_id = launch(211, v1::API_DOMAIN_RUNTIME, t0 + 10'000);
    k.start = t0 + 100'000;
    k.end = k.start + compute;
    k.stream = 7;
    k.config.name = "_Z4gemmPKfS0_Pf";
    b.Add(k);
    const uint64_t arrival = k.end + static_cast<uint64_t>((rank * 7 + step) % 5) * 1'000;
    core::NvtxActivity call = n;
    call.id = static_cast<uint64_t>(step) * 2 + 2;
    call.time = arrival - 40'000;
    call.name = "ncclAllReduce";
    call.domain = "NCCL";
    b.Add(call);
    core::NvtxPayloadRecord p;
    p.id = call.id;
    p.kind = v1::NVTX_PAYLOAD_KIND_EXTENDED;
    p.schema_id = (uint64_t{1} << 24) + 5;
    p.data.assign(24, '\0');
    const uint64_t comm = 0x5eed, bytes = 64ull << 20;
    std::memcpy(p.data.data(), &comm, 8);
    std::memcpy(p.data.data() + 8, &bytes, 8);
    b.Add(p);
    core::KernelActivity nccl;
    nccl.correlation_id = launch(1, v1::API_DOMAIN_DRIVER, arrival - 30'000);
    call.kind = v1::NVTX_KIND_RANGE_END;
    call.time = arrival - 20'000;
    call.name = "";
    b.Add(call);
    nccl.start = arrival;
    nccl.end = t0 + 100'000 + 12'000'000 + 1'000'000;
    nccl.stream = 9;
    nccl.config.name = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
    b.Add(nccl);
    n.kind = v1::NVTX_KIND_RANGE_END;
    n.time = t0 + 19'900'000;
    n.name = "";
    b.Add(n);
  }
  v1::Chunk chunk;
  b.TakeChunk(&chunk);
  (void)(*writer)->WriteChunk(chunk);
  (void)(*writer)->Close();
  return path;
}

const std::vector<std::string>& RankTraces() {
  static const std::vector<std::string> paths = [] {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/cuscope_rank_set_bench_", getpid());
    if (std::system(absl::StrCat("mkdir -p '", dir, "'").c_str()) != 0) std::exit(1);
    std::vector<std::string> out;
    for (int r = 0; r < kRanks; ++r) out.push_back(WriteRank(dir, r));
    return out;
  }();
  return paths;
}

void BM_OneRankTrace(benchmark::State& state) {
  const std::string& path = RankTraces()[0];
  const double before = PeakRssMib();
  for (auto _ : state) {
    absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
    const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
    benchmark::DoNotOptimize(ranks::SummarizeRank(timeline, path, 0, ranks::RankSummaryOptions()));
  }
  state.counters["peak_rss_mib"] = PeakRssMib();
  state.counters["rss_growth_mib"] = PeakRssMib() - before;
}

void BM_RankSet(benchmark::State& state) {
  const std::vector<std::string>& paths = RankTraces();
  const double before = PeakRssMib();
  size_t straggler_found = 0;
  for (auto _ : state) {
    ranks::RankTracesOptions options;
    options.jobs = static_cast<int>(state.range(0));
    absl::StatusOr<ranks::RankSetReport> report = ranks::AnalyzeRankTraces(paths, options);
    if (!report.ok()) state.SkipWithError(std::string(report.status().message()).c_str());
    for (const analysis::Finding& f : report->findings) straggler_found += f.rule_id == "ranks.straggler";
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kRanks);
  state.counters["ranks"] = kRanks;
  state.counters["straggler_named"] = static_cast<double>(straggler_found) / static_cast<double>(state.iterations());
  state.counters["peak_rss_mib"] = PeakRssMib();
  state.counters["rss_growth_mib"] = PeakRssMib() - before;
}

BENCHMARK(BM_OneRankTrace)->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK(BM_RankSet)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace cuscope
