// Builds trace files for the export tests: records in nanoseconds from kT0, written chunk by chunk
// through the real chunk builder, so a test controls which record lands in which chunk.
#ifndef CUSCOPE_TESTS_EXPORT_EXPORT_TEST_TRACE_H_
#define CUSCOPE_TESTS_EXPORT_EXPORT_TEST_TRACE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuscope/v1/trace.pb.h"
#include "lib/core/chunk_builder.h"

namespace cuscope::exporter::testing {

inline constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;
inline constexpr uint32_t kPid = 42;

class TestTrace {
 public:
  TestTrace();

  v1::Header& header() { return header_; }

  // An API call; `name` decides the domain (cu* but not cuda*: driver). Returns nothing: the
  // correlation id is the caller's.
  void Api(const std::string& name, uint64_t start, uint64_t end, uint64_t correlation, uint64_t tid = 100);
  void Kernel(const char* name, uint64_t start, uint64_t end, uint32_t stream, uint64_t correlation, uint32_t flags = 0,
              uint32_t graph_id = 0, int grid_x = 4, int block_x = 128, uint32_t registers = 32);
  void Memcpy(v1::CopyKind kind, uint64_t start, uint64_t end, uint64_t bytes, uint32_t stream, uint64_t correlation);
  void Memset(uint64_t start, uint64_t end, uint64_t bytes, uint32_t stream, uint64_t correlation);
  void Nvtx(v1::NvtxKind kind, uint64_t id, uint64_t time, const char* name, uint64_t tid = 100);
  void Overhead(const char* kind, uint64_t start, uint64_t end, uint64_t tid = 100);
  void Metrics(uint64_t correlation, const char* kernel);
  // A launch's call stack, innermost frame first: (module, mangled function).
  void LaunchStack(uint64_t correlation, const std::vector<std::pair<std::string, std::string>>& frames);
  // A capture window; an unset start or end writes the half the collector writes when a window
  // opens (or closes) in a chunk of its own.
  void Window(v1::WindowKind kind, std::optional<uint64_t> start, std::optional<uint64_t> end, const char* reason);
  // One interval of monitor mode's figures, as written (times as given).
  void MonitorInterval(const v1::MonitorInterval& interval);

  // Closes the current chunk: later records go to the next one.
  void EndChunk();
  // The file's bytes: magic, header, every chunk (the open one closed first).
  std::string Bytes();
  // Writes Bytes() (cut to `keep` bytes when given) to a fresh temporary file; returns its path.
  std::string Write(size_t keep = SIZE_MAX);

 private:
  std::map<std::string, uint32_t> callback_of_;
  std::map<uint32_t, std::string> name_of_;
  std::unique_ptr<core::ChunkBuilder> builder_;
  v1::Header header_;
  std::vector<v1::Chunk> chunks_;
};

// The trace most export tests read, two chunks (times in ns from kT0; thread 100 of pid 42):
//   chunk 1: a TIMELINE window opens at 0; cudaLaunchKernel [1000, 3000] and the driver's
//     cuLaunchKernel [1500, 2500] inside it, both correlation 1, launch kernel(float*) [5000, 15000]
//     on stream 7 (grid 4, block 128, 32 registers, 256 + 1024 B shared memory); k2() [12000,
//     18000] on stream 7 with no call overlaps it; cudaMemsetAsync [15000, 15500] (3) issues a
//     memset [16000, 18000] of 4096 B on stream 8; cudaMemcpyAsync [20000, 21000] (2) a 1 MiB HtoD
//     copy [22000, 32000] on stream 7; NVTX "outer" opens at 500, "inner" spans [900, 3500], a
//     mark "checkpoint" at 4000; a CUPTI overhead "buffer flush" [33000, 34000];
//   chunk 2: "outer" closes at 40000; cudaLaunchKernel [45000, 60000] (4) of profiled(), replayed
//     for metrics (zero-length kernel at 50000, flagged, with a metric row and a METRICS window
//     [45000, 60000]); cudaGraphLaunch [70000, 71000] (5) with graph 9's nodes node1() [72000,
//     74000] and node2() [74000, 76000] on stream 7; the TIMELINE window closes at 100000; after a
//     long idle stretch cudaLaunchKernel [9990000, 9995000] (6) launches kernel(float*)
//     [10000000, 10001000].
void BuildScenario(TestTrace* t);

// A fresh path in the test's temporary directory.
std::string TempPath(const std::string& suffix);
std::string ReadFile(const std::string& path);

}  // namespace cuscope::exporter::testing

#endif  // CUSCOPE_TESTS_EXPORT_EXPORT_TEST_TRACE_H_
