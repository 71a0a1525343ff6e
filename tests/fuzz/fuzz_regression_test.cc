// Replays the fuzzers' seed corpus and every input a fuzzer once failed on through the same
// checks the fuzzers run, so a fixed bug stays fixed in the ordinary test suite.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "lib/analysis/analyzer.h"
#include "lib/core/trace.h"
#include "tests/fuzz/fuzz_checks.h"

namespace cuscope::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> FilesIn(const std::string& sub) {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(CUSCOPE_FUZZ_DIR) / sub;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename().string()[0] != '.' && e.path().extension() != ".md") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(FuzzRegressionTest, SeedCorpusHoldsRealAndCutTraces) {
  const auto files = FilesIn("corpus");
  ASSERT_GE(files.size(), 10u);
  // The real trace loads clean; its cut copies load with the cut reported.
  auto real = core::LoadTraceFromBytes(Read(fs::path(CUSCOPE_FUZZ_DIR) / "corpus" / "real_h200"));
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_FALSE(real->truncated());
  EXPECT_GT(real->kernels.size(), 0u);
  auto cut = core::LoadTraceFromBytes(Read(fs::path(CUSCOPE_FUZZ_DIR) / "corpus" / "real_h200_cut_in_second_chunk"));
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ(cut->chunks, 1u);
  EXPECT_GT(cut->tail_bytes_dropped, 0u);
}

TEST(FuzzRegressionTest, EverySeedPassesTheReaderAndAnalyzerChecks) {
  for (const fs::path& p : FilesIn("corpus")) {
    const std::string bytes = Read(p);
    EXPECT_EQ(CheckTraceReader(bytes), "") << p;
    EXPECT_EQ(CheckAnalyzer(bytes), "") << p;
  }
}

TEST(FuzzRegressionTest, EveryInputAFuzzerFailedOnNowPasses) {
  for (const fs::path& p : FilesIn("regressions")) {
    const std::string bytes = Read(p);
    EXPECT_EQ(CheckTraceReader(bytes), "") << p;
    EXPECT_EQ(CheckAnalyzer(bytes), "") << p;
  }
}

// A 40-byte file whose NVTX range names thread 4,000,000,000 made `cuscope analyze` allocate
// 16 GB for a per-thread table. The reader now refuses rows naming undefined threads or strings.
TEST(FuzzRegressionTest, NvtxRangeOnAnUndefinedThreadIsReportedAsDamage) {
  auto t = core::LoadTraceFromBytes(Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "nvtx_marker_with_undefined_thread"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->corruption.has_value());
  EXPECT_TRUE(absl::IsDataLoss(*t->corruption));
  EXPECT_TRUE(t->nvtx.empty());
  const analysis::Analysis a = analysis::Analyze(*t, analysis::AnalyzeOptions());
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_NE(a.warnings[0].find("damaged"), std::string::npos) << a.warnings[0];
}

long MaxRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A tiny file whose length prefix promises a 512 MiB block is a cut trace, and reading it from
// disk costs memory only as far as the file goes.
TEST(FuzzRegressionTest, TinyFileClaimingAHugeBlockIsACutTraceReadInLittleMemory) {
  const fs::path path = fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "block_length_at_the_limit_in_a_tiny_file";
  const long before = MaxRssKb();
  auto t = core::LoadTrace(path.string());
  const long grown_kb = MaxRssKb() - before;
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->chunks, 0u);
  EXPECT_FALSE(t->corruption.has_value());
  EXPECT_EQ(t->bytes_read + t->tail_bytes_dropped, fs::file_size(path));
  EXPECT_GT(t->tail_bytes_dropped, 0u);
  EXPECT_LT(grown_kb, 64 * 1024) << "reading a " << fs::file_size(path) << "-byte file grew the process by " << grown_kb
                                 << " KB";
}

}  // namespace
}  // namespace cuscope::fuzz
