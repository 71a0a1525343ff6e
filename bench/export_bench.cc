// Export throughput (Perfetto, Chrome JSON, SQLite): a generated launch-heavy trace of 1,000,000 kernels, each with its launch
// call (and a copy with its call every 100 launches), written to a file chunk by chunk (10,000
// launches per chunk, as CUPTI buffers hand them over), then exported. Run it pinned to one core:
// `taskset -c 1 build/bin/export_bench`.
//
// Counters: kernels/s (items_per_second); output bytes per kernel; the process's peak resident
// memory (getrusage ru_maxrss) after the export, and its growth over the peak before the
// benchmark ran. ru_maxrss is a high-water mark for the whole process, so the benchmarks run from
// the lightest (no findings: the streaming export alone) to the heaviest (with the analysis pass,
// which loads the whole trace); each one's growth is what it needed beyond the ones before it.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace_writer.h"
#include "lib/export/exporter.h"
#include "lib/export/sqlite_exporter.h"

namespace cuscope {
namespace {

constexpr int kChunks = 100;
constexpr int kLaunchesPerChunk = 10'000;
constexpr uint64_t kKernels = uint64_t{kChunks} * kLaunchesPerChunk;

std::string TempPath(const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/cuscope_export_bench_", getpid(), suffix);
}

double PeakRssMib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

// Writes the trace once per process; returns its path.
const std::string& InputTrace() {
  static const std::string path = [] {
    const std::string p = TempPath(".cuscope");
    auto writer = core::TraceWriter::Create(p, /*overwrite=*/true);
    if (!writer.ok()) {
      std::fprintf(stderr, "export_bench: %s\n", std::string(writer.status().message()).c_str());
      std::exit(1);
    }
    v1::Header header;
    header.set_format_version(1);
    header.mutable_session()->set_pid(1);
    header.mutable_session()->add_command_line("bench_app");
    v1::Device* d = header.add_devices();
    d->set_id(0);
    d->set_name("NVIDIA H200");
    (void)(*writer)->WriteHeader(header);
    core::ChunkBuilder builder([](v1::ApiDomain, uint32_t cbid) {
      return std::string(cbid == 211 ? "cudaLaunchKernel_v7000" : "cudaMemcpyAsync_v3020");
    });
    const char* names[] = {"_Z15elementwise_addPfPKfS1_i", "_Z15elementwise_mulPfPKfS1_i", "_Z10reduce_sumPfPKfi",
                           "_Z4gemmILi128ELi128EEvPKfS1_Pfiii"};
    uint64_t t = 1'764'000'000'000'000'000ull, corr = 1;
    v1::Chunk chunk;
    for (int c = 0; c < kChunks; ++c) {
      for (int i = 0; i < kLaunchesPerChunk; ++i) {
        t += 4400 + (i % 17) * 13;
        core::ApiActivity a;
        a.start = t - 3000;
        a.end = t - 500;
        a.domain = v1::API_DOMAIN_RUNTIME;
        a.callback_id = 211;
        a.pid = 1;
        a.tid = 2;
        a.correlation_id = corr;
        builder.Add(a);
        core::KernelActivity k;
        k.start = t;
        k.end = t + 700 + (i % 11) * 7;
        k.correlation_id = corr++;
        k.stream = 7;
        k.config.name = names[i % 4];
        k.config.grid_x = 64 << (i % 4);
        k.config.block_x = 256;
        k.config.registers_per_thread = 32;
        builder.Add(k);
        if (i % 100 == 99) {
          t += 2000;
          a.start = t - 1500;
          a.end = t - 1000;
          a.callback_id = 41;
          a.correlation_id = corr;
          builder.Add(a);
          core::MemcpyRecord m;
          m.start = t;
          m.end = t + 1500;
          m.copy_kind = v1::COPY_KIND_DTOH;
          m.src_kind = v1::MEMORY_KIND_DEVICE;
          m.dst_kind = v1::MEMORY_KIND_PINNED;
          m.bytes = 65536;
          m.stream = 13;
          m.correlation_id = corr++;
          m.async = true;
          builder.Add(m);
        }
      }
      builder.TakeChunk(&chunk);
      (void)(*writer)->WriteChunk(chunk);
    }
    (void)(*writer)->Close();
    return p;
  }();
  return path;
}

// Runs `export_once(input, output)` (it returns the bytes written, or an error) as the benchmark's
// body and sets the counters every export reports.
template <typename ExportOnce>
void RunExportBenchmark(benchmark::State& state, const std::string& output, ExportOnce export_once) {
  const std::string& input = InputTrace();
  const double rss_before = PeakRssMib();
  uint64_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<uint64_t> written = export_once(input, output);
    if (!written.ok()) {
      state.SkipWithError(std::string(written.status().message()).c_str());
      return;
    }
    bytes = *written;
  }
  const double rss_after = PeakRssMib();
  std::remove(output.c_str());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kKernels));
  state.counters["kernels"] = static_cast<double>(kKernels);
  state.counters["out_bytes_per_kernel"] = static_cast<double>(bytes) / static_cast<double>(kKernels);
  state.counters["peak_rss_mib"] = rss_after;
  state.counters["rss_growth_mib"] = rss_after - rss_before;
}

void RunExport(benchmark::State& state, exporter::ExportFormat format, bool findings) {
  exporter::ExportOptions options;
  options.format = format;
  options.findings = findings;
  options.overwrite = true;
  RunExportBenchmark(state, TempPath(format == exporter::ExportFormat::kPerfetto ? ".pftrace" : ".json"),
                     [&](const std::string& in, const std::string& out) -> absl::StatusOr<uint64_t> {
                       absl::StatusOr<exporter::ExportSummary> s = exporter::ExportToFile(in, out, options);
                       if (!s.ok()) return s.status();
                       return s->bytes_written;
                     });
}

void BM_ExportPerfettoNoFindings(benchmark::State& state) {
  RunExport(state, exporter::ExportFormat::kPerfetto, false);
}
void BM_ExportChromeJsonNoFindings(benchmark::State& state) {
  RunExport(state, exporter::ExportFormat::kChromeJson, false);
}
void BM_ExportPerfettoWithFindings(benchmark::State& state) {
  RunExport(state, exporter::ExportFormat::kPerfetto, true);
}
// The SQLite export loads the whole trace (as `cuscope stats` does): it comes after the streaming
// exports. Without findings: what `cuscope.read_trace(path, findings=False)` runs.
void BM_ExportSqliteNoFindings(benchmark::State& state) {
  exporter::SqliteExportOptions options;
  options.findings = false;
  options.overwrite = true;
  RunExportBenchmark(state, TempPath(".sqlite"),
                     [&](const std::string& in, const std::string& out) -> absl::StatusOr<uint64_t> {
                       absl::StatusOr<exporter::SqliteExportSummary> s = exporter::ExportToSqlite(in, out, options);
                       if (!s.ok()) return s.status();
                       return s->bytes_written;
                     });
}

// In order of the memory they need (see the top of the file).
BENCHMARK(BM_ExportPerfettoNoFindings)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ExportChromeJsonNoFindings)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_ExportSqliteNoFindings)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_ExportPerfettoWithFindings)->Unit(benchmark::kMillisecond)->Iterations(2);

// The input is written once; removed when the process ends, or kept at $CUSCOPE_BENCH_KEEP_TRACE
// (bench/python_read_bench.py reads it into pandas).
struct RemoveInput {
  ~RemoveInput() {
    const std::string input = TempPath(".cuscope");
    const char* keep = std::getenv("CUSCOPE_BENCH_KEEP_TRACE");
    if (keep != nullptr && *keep != '\0' && std::rename(input.c_str(), keep) == 0) return;
    std::remove(input.c_str());
  }
} remove_input;

}  // namespace
}  // namespace cuscope
