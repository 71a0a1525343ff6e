// Replays the fuzzers' seed corpus and every input a fuzzer once failed on through the same
// checks the fuzzers run, so a fixed bug stays fixed in the ordinary test suite.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/analyzer.h"
#include "lib/control/protocol.h"
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

TEST(FuzzRegressionTest, EverySeedPassesTheReaderAnalyzerAndExportChecks) {
  for (const fs::path& p : FilesIn("corpus")) {
    const std::string bytes = Read(p);
    EXPECT_EQ(CheckTraceReader(bytes), "") << p;
    EXPECT_EQ(CheckAnalyzer(bytes), "") << p;
    EXPECT_EQ(CheckExporter(bytes), "") << p;
  }
}

TEST(FuzzRegressionTest, EveryInputAFuzzerFailedOnNowPasses) {
  for (const fs::path& p : FilesIn("regressions")) {
    const std::string bytes = Read(p);
    EXPECT_EQ(CheckTraceReader(bytes), "") << p;
    EXPECT_EQ(CheckAnalyzer(bytes), "") << p;
    EXPECT_EQ(CheckExporter(bytes), "") << p;
  }
}

TEST(FuzzRegressionTest, ControlRequestSeedsAreAcceptedOrRefusedAsDocumented) {
  const auto files = FilesIn("corpus_control");
  ASSERT_GE(files.size(), 6u);
  for (const fs::path& p : files) {
    const std::string bytes = Read(p);
    EXPECT_EQ(CheckControlRequest(bytes), "") << p;
    const bool accepted = control::ParseRequest(bytes).ok();
    const std::string name = p.filename().string();
    EXPECT_EQ(accepted, name == "status" || name == "window" || name == "snapshot" || name == "detach") << p;
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

// ---- The reproductions of the out-of-range review, through the `cuscope` command itself ----------

struct Run {
  bool exited = false;  // by exit(), not by a signal
  int code = -1;
  std::string out, err;
};

// Runs the cuscope command with `args` (each a path or an option, none with a quote in it).
Run Cuscope(const std::string& args, const fs::path& dir) {
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const std::string command = absl::StrCat("'", CUSCOPE_CLI, "' ", args, " >'", out.string(), "' 2>'", err.string(), "'");
  const int status = std::system(command.c_str());
  Run r;
  r.exited = status != -1 && WIFEXITED(status);
  r.code = r.exited ? WEXITSTATUS(status) : -1;
  r.out = Read(out);
  r.err = Read(err);
  return r;
}

size_t Lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// Every command on a hand-made reproduction completes or refuses with one line, and nothing it
// writes is larger than the export check's bound for the file.
void EveryCommandCompletesOrRefusesInOneLine(const std::string& name) {
  const fs::path input = fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / name;
  ASSERT_TRUE(fs::exists(input)) << input;
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("cuscope-regression-", ::getpid(), "-", name);
  fs::create_directories(dir);
  const size_t bound = kExportBytesPerInputByte * fs::file_size(input) + kExportFixedBytes;
  const std::string in = absl::StrCat("'", input.string(), "'");
  const std::vector<std::pair<std::string, fs::path>> commands = {
      {absl::StrCat("analyze ", in), {}},
      {absl::StrCat("stats ", in), {}},
      {absl::StrCat("report ", in, " -o '", (dir / "r.html").string(), "'"), dir / "r.html"},
      {absl::StrCat("diff ", in, " ", in), {}},
      {absl::StrCat("dump ", in), {}},
      {absl::StrCat("export --force-overwrite ", in, " -o '", (dir / "t.pftrace").string(), "'"), dir / "t.pftrace"},
      {absl::StrCat("export --force-overwrite --no-findings --format chrome-json ", in, " -o '",
                    (dir / "t.json").string(), "'"),
       dir / "t.json"},
  };
  for (const auto& [args, output] : commands) {
    const Run r = Cuscope(args, dir);
    EXPECT_TRUE(r.exited) << "cuscope " << args << " died: " << r.err;
    if (r.code != 0) {
      EXPECT_EQ(Lines(r.err), 1u) << "cuscope " << args << " exited " << r.code << ":\n" << r.err;
      EXPECT_TRUE(absl::StartsWith(r.err, "cuscope")) << r.err;
    }
    EXPECT_LE(r.out.size(), bound) << "cuscope " << args;
    if (!output.empty() && fs::exists(output)) {
      EXPECT_LE(fs::file_size(output), bound) << "cuscope " << args;
    }
  }
  fs::remove_all(dir);
}

// 37 bytes: one copy on device 0xffffffff, the analyzer's and the exporter's "no device yet"
// value: analyze, stats, report, diff and export wrote through a null pointer.
TEST(FuzzRegressionTest, CopyOnDeviceFfffffffIsDamageAndNoCommandCrashes) {
  auto t = core::LoadTraceFromBytes(Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "copy_on_device_ffffffff"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t->corruption->message(), "copy row names device 4294967295"));
  EXPECT_TRUE(t->memcpys.empty());
  EveryCommandCompletesOrRefusesInOneLine("copy_on_device_ffffffff");
}

// Registers per thread of 4,294,967,295 made the occupancy advice try 536 million register counts;
// the reader now refuses what CUPTI's 16-bit field cannot hold, and the advice tries 31 at most.
TEST(FuzzRegressionTest, HugeRegistersPerThreadAreDamageAndTheFieldLimitIsAnalyzed) {
  auto t = core::LoadTraceFromBytes(
      Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "registers_per_thread_at_uint32_max"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t->corruption->message(), "4294967295 registers per thread"));
  EveryCommandCompletesOrRefusesInOneLine("registers_per_thread_at_uint32_max");

  auto limit = core::LoadTraceFromBytes(
      Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "registers_per_thread_at_the_field_limit"));
  ASSERT_TRUE(limit.ok()) << limit.status();
  EXPECT_FALSE(limit->corruption.has_value());
  const analysis::Analysis a = analysis::Analyze(*limit, analysis::AnalyzeOptions());
  const std::string text = analysis::RenderAnalysisText(a, "limit.cuscope", 5);
  EXPECT_TRUE(absl::StrContains(text, "limited by registers")) << text;
  EXPECT_TRUE(absl::StrContains(text, "occupancy_limit_registers=0")) << text;
  EveryCommandCompletesOrRefusesInOneLine("registers_per_thread_at_the_field_limit");
}

// Device ids: 64 devices load; device 256 (whose low 8 bits are device 0's, once one Perfetto track
// for both) is damage; 2,000 distinct devices (the review's 200,000 made the analysis quadratic and
// the Chrome JSON 2.9 GB) are refused at the first past the bound; a header declaring 1,000
// devices is refused.
TEST(FuzzRegressionTest, DeviceIdsPastTheBoundAreRefused) {
  auto t = core::LoadTraceFromBytes(
      Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "sixty_four_devices_then_device_256"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->chunks, 1u);
  EXPECT_EQ(t->memcpys.size(), 64u);
  ASSERT_TRUE(t->corruption.has_value());
  EXPECT_TRUE(absl::StrContains(t->corruption->message(), "copy row names device 256 (device ids are below 64)"));
  const analysis::Analysis a = analysis::Analyze(*t, analysis::AnalyzeOptions());
  EXPECT_EQ(a.summary.devices_size(), 64);
  EveryCommandCompletesOrRefusesInOneLine("sixty_four_devices_then_device_256");

  auto many = core::LoadTraceFromBytes(Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "two_thousand_devices"));
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(many->chunks, 0u);
  EXPECT_TRUE(many->memcpys.empty());
  ASSERT_TRUE(many->corruption.has_value());
  EveryCommandCompletesOrRefusesInOneLine("two_thousand_devices");

  auto header = core::LoadTraceFromBytes(
      Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / "header_declaring_a_thousand_devices"));
  ASSERT_FALSE(header.ok());
  EXPECT_TRUE(absl::IsDataLoss(header.status()));
  EXPECT_EQ(header.status().message(), "corrupt trace: the header declares 1000 devices (at most 64)");
  EveryCommandCompletesOrRefusesInOneLine("header_declaring_a_thousand_devices");
}

// An outside review's amplifying traces: every kernel names one 20,000-byte name, or one 64-frame
// stack of 1,000-byte function names. Chrome JSON and dump spelled them out per record (2.4 GB from
// 197 KB; 601 MB from 31 KB). Every command now completes within the bound: names cut, the stack
// printed once.
TEST(FuzzRegressionTest, TracesThatRepeatALongNameOrADeepStackStayWithinTheBound) {
  for (const char* name : {"kernels_naming_one_long_name", "launches_naming_one_deep_stack"}) {
    auto t = core::LoadTraceFromBytes(Read(fs::path(CUSCOPE_FUZZ_DIR) / "regressions" / name));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->kernels.size(), 5000u) << name;
    EXPECT_FALSE(t->truncated()) << name;
    EveryCommandCompletesOrRefusesInOneLine(name);
  }
}

}  // namespace
}  // namespace cuscope::fuzz
