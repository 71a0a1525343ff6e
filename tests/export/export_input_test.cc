// What `cuscope export` does with inputs and outputs that are not right: a cut trace, files that
// are not traces, a newer format, outputs it cannot or must not write; and the command's exit
// codes.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "lib/core/trace_format.h"
#include "lib/export/exporter.h"
#include "tests/export/export_test_trace.h"
#include "tests/export/perfetto_decode.h"

namespace cuscope::exporter::testing {
namespace {

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

TEST(ExportInputTest, CutTraceExportsWhatItHolds) {
  TestTrace t;
  BuildScenario(&t);
  const std::string bytes = t.Bytes();
  // Cut inside the second (last) chunk.
  const std::string input = t.Write(bytes.size() - 10);
  const std::string output = TempPath(".pftrace");
  ExportOptions options;
  options.bucket_ns = 10'000;
  absl::StatusOr<ExportSummary> summary = ExportToFile(input, output, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->chunks, 1u);
  EXPECT_GT(summary->tail_bytes_dropped, 0u);
  ASSERT_EQ(summary->warnings.size(), 2u);
  EXPECT_TRUE(absl::StrContains(summary->warnings[0], "incomplete block")) << summary->warnings[0];
  EXPECT_TRUE(absl::StrContains(summary->warnings[0], "exported the 1 complete chunk(s)")) << summary->warnings[0];
  // "outer" closes in the lost chunk: it is drawn to the end of what there is, and said so.
  EXPECT_TRUE(absl::StrContains(summary->warnings[1], "1 NVTX range(s) never closed")) << summary->warnings[1];

  const DecodedTrace d = DecodePerfetto(ReadFile(output));
  for (const std::string& e : d.errors) ADD_FAILURE() << e;
  EXPECT_EQ(d.Named("kernel").size(), 1u);
  EXPECT_EQ(d.Named("Memcpy HtoD").size(), 1u);
  EXPECT_EQ(d.Named("node1").size(), 0u);
  ASSERT_EQ(d.Named("outer").size(), 1u);
  const DecodedSlice& outer = *d.Named("outer")[0];
  EXPECT_EQ(outer.end, kT0 + 34000);  // the last timestamp of chunk 1 (the overhead record's end)
  EXPECT_EQ(std::get<bool>(outer.args.at("unterminated")), true);
  // The TIMELINE window never closed either: drawn to the end, marked.
  ASSERT_EQ(d.Named("timeline capture").size(), 1u);
  EXPECT_EQ(d.Named("timeline capture")[0]->end, kT0 + 34000);
  EXPECT_EQ(std::get<bool>(d.Named("timeline capture")[0]->args.at("unterminated")), true);
}

TEST(ExportInputTest, CutInTheHeaderIsNotATrace) {
  TestTrace t;
  BuildScenario(&t);
  const std::string input = t.Write(core::kTraceMagic.size() + 3);
  const std::string output = TempPath(".pftrace");
  absl::StatusOr<ExportSummary> summary = ExportToFile(input, output, ExportOptions());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Exists(output));
}

TEST(ExportInputTest, NotATrace) {
  const std::string input = TempPath(".txt");
  std::ofstream(input) << "hello, world\n";
  const std::string output = TempPath(".pftrace");
  absl::StatusOr<ExportSummary> summary = ExportToFile(input, output, ExportOptions());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(summary.status().message(), "not a cuscope trace")) << summary.status();
  EXPECT_FALSE(Exists(output));
}

TEST(ExportInputTest, NewerFormatVersion) {
  TestTrace t;
  t.header().set_format_version(core::kFormatVersion + 1);
  t.Api("cudaLaunchKernel_v7000", 0, 100, 1);
  t.EndChunk();
  const std::string output = TempPath(".pftrace");
  absl::StatusOr<ExportSummary> summary = ExportToFile(t.Write(), output, ExportOptions());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(summary.status().message(), "newer")) << summary.status();
  EXPECT_FALSE(Exists(output));
}

TEST(ExportInputTest, OutputsItMustNotWrite) {
  TestTrace t;
  BuildScenario(&t);
  const std::string input = t.Write();
  // A directory that does not exist.
  absl::StatusOr<ExportSummary> summary = ExportToFile(input, "/nonexistent-dir/out.pftrace", ExportOptions());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(summary.status().message(), "cannot write /nonexistent-dir/out.pftrace"));
  // An existing file, unless told to replace it.
  const std::string existing = TempPath(".pftrace");
  std::ofstream(existing) << "keep me";
  summary = ExportToFile(input, existing, ExportOptions());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadFile(existing), "keep me");
  ExportOptions overwrite;
  overwrite.overwrite = true;
  overwrite.findings = false;
  EXPECT_TRUE(ExportToFile(input, existing, overwrite).ok());
  EXPECT_NE(ReadFile(existing), "keep me");
  // The input itself, even with overwrite.
  summary = ExportToFile(input, input, overwrite);
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ReadFile(input).empty());
}

TEST(ExportInputTest, EmptyTraceGivesEmptyTimeline) {
  TestTrace t;
  const std::string output = TempPath(".pftrace");
  absl::StatusOr<ExportSummary> summary = ExportToFile(t.Write(), output, ExportOptions());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->kernels, 0u);
  const DecodedTrace d = DecodePerfetto(ReadFile(output));
  EXPECT_TRUE(d.errors.empty());
  EXPECT_TRUE(d.slices.empty());
}

// ---- Out-of-range values (tests/fuzz/regressions, made by fuzz_make_regressions) --------------

std::string Regression(const std::string& name) {
  return std::string(CUSCOPE_FUZZ_CORPUS_DIR) + "/../regressions/" + name;
}

// Devices 0 to 63 each get their own group, utilization and stream track; device 256, whose low 8
// bits are device 0's (the export once declared one stream track for both and failed), is damage.
TEST(ExportInputTest, SixtyFourDevicesExportAndDevice256IsDamage) {
  for (const ExportFormat format : {ExportFormat::kPerfetto, ExportFormat::kChromeJson}) {
    const std::string output = TempPath(format == ExportFormat::kPerfetto ? ".pftrace" : ".json");
    ExportOptions options;
    options.format = format;
    absl::StatusOr<ExportSummary> summary = ExportToFile(Regression("sixty_four_devices_then_device_256"), output, options);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->chunks, 1u);
    EXPECT_EQ(summary->memcpys, 64u);
    EXPECT_EQ(summary->tracks, 64u * 3);
    ASSERT_FALSE(summary->warnings.empty());
    EXPECT_TRUE(absl::StrContains(summary->warnings[0], "copy row names device 256")) << summary->warnings[0];
    EXPECT_LT(summary->bytes_written, 256u * 1024);
    if (format == ExportFormat::kPerfetto) {
      const DecodedTrace d = DecodePerfetto(ReadFile(output));
      EXPECT_TRUE(d.errors.empty());
      EXPECT_EQ(d.slices.size(), 64u);
      EXPECT_NE(d.TrackNamed("GPU 63"), 0u);
    }
  }
}

// The review's 37-byte file (a copy on device 0xffffffff) crashed the export; 2,000 devices made
// one utilization counter each (200,000 made 2.9 GB of JSON). Both are damage now: nothing to draw.
TEST(ExportInputTest, DevicesPastTheBoundExportNothingWithAWarning) {
  for (const std::string name : {"copy_on_device_ffffffff", "two_thousand_devices"}) {
    for (const bool findings : {false, true}) {
      ExportOptions options;
      options.format = ExportFormat::kChromeJson;
      options.findings = findings;
      absl::StatusOr<ExportSummary> summary = ExportToFile(Regression(name), TempPath(".json"), options);
      ASSERT_TRUE(summary.ok()) << name << ": " << summary.status();
      EXPECT_EQ(summary->chunks, 0u) << name;
      EXPECT_EQ(summary->tracks, 0u) << name;
      ASSERT_EQ(summary->warnings.size(), 1u) << name;
      EXPECT_TRUE(absl::StrContains(summary->warnings[0], "(device ids are below 64)")) << summary->warnings[0];
      EXPECT_LT(summary->bytes_written, 1024u) << name;
    }
  }
}

TEST(ExportInputTest, HeaderDeclaringTooManyDevicesIsRefusedWithoutAnOutput) {
  const std::string output = TempPath(".pftrace");
  absl::StatusOr<ExportSummary> summary =
      ExportToFile(Regression("header_declaring_a_thousand_devices"), output, ExportOptions());
  ASSERT_FALSE(summary.ok());
  EXPECT_TRUE(absl::IsDataLoss(summary.status())) << summary.status();
  EXPECT_TRUE(absl::StrContains(summary.status().message(), "the header declares 1000 devices (at most 64)"));
  EXPECT_FALSE(Exists(output));
}

// ---- The command -------------------------------------------------------------------------------

int Export(std::vector<std::string> args) { return cli::RunExport(args); }

TEST(ExportCommandTest, ExitCodes) {
  TestTrace t;
  BuildScenario(&t);
  const std::string input = t.Write();
  const std::string out = TempPath(".pftrace");
  EXPECT_EQ(Export({"--format", "perfetto", input, "-o", out}), 0);
  EXPECT_TRUE(Exists(out));
  EXPECT_TRUE(DecodePerfetto(ReadFile(out)).errors.empty());
  // The same output again: refused without -f, replaced with it.
  EXPECT_EQ(Export({input, "-o", out}), 2);
  EXPECT_EQ(Export({input, "-o", out, "-f", "--no-findings", "--bucket-us", "2.5"}), 0);

  const std::string json = TempPath(".json");
  EXPECT_EQ(Export({"--format", "chrome-json", input, "--output", json}), 0);
  EXPECT_EQ(ReadFile(json).rfind("{\"traceEvents\":[", 0), 0u);

  EXPECT_EQ(Export({"--format", "svg", input, "-o", TempPath(".svg")}), 2);
  EXPECT_EQ(Export({"--format"}), 2);
  EXPECT_EQ(Export({input, "-o", TempPath(".x"), "--bucket-us", "0"}), 2);
  EXPECT_EQ(Export({input, "--frobnicate"}), 2);
  EXPECT_EQ(Export({}), 2);
  EXPECT_EQ(Export({input, input}), 2);
  EXPECT_EQ(Export({"/nonexistent.cuscope", "-o", TempPath(".pftrace")}), 2);
  const std::string text = TempPath(".txt");
  std::ofstream(text) << "not a trace";
  EXPECT_EQ(Export({text, "-o", TempPath(".pftrace")}), 2);
  EXPECT_EQ(Export({input, "-o", "/nonexistent-dir/x.pftrace"}), 2);
  EXPECT_EQ(Export({"--help"}), 0);
}

// Without -o the output goes into the current directory, named after the trace (never beside the
// trace, whose folder may be read-only or shared), as for every command that writes.
TEST(ExportCommandTest, DefaultOutputInTheCurrentDirectory) {
  TestTrace t;
  BuildScenario(&t);
  const std::string input = t.Write();
  ASSERT_TRUE(absl::EndsWith(input, ".cuscope"));
  const std::string stem = input.substr(input.rfind('/') + 1, input.size() - input.rfind('/') - 1 - 8);
  const std::string dir = TempPath("_cwd");  // a fresh name in the test's temporary directory
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << dir;
  char previous[4096];
  ASSERT_NE(::getcwd(previous, sizeof previous), nullptr);
  ASSERT_EQ(::chdir(dir.c_str()), 0);
  EXPECT_EQ(Export({input, "--no-findings"}), 0);
  EXPECT_EQ(Export({"--format", "chrome-json", input, "--no-findings"}), 0);
  EXPECT_EQ(Export({"--format=sqlite", input, "--no-findings"}), 0);
  ASSERT_EQ(::chdir(previous), 0);
  for (const char* extension : {".pftrace", ".json", ".sqlite"}) {
    const std::string made = dir + "/" + stem + extension;
    EXPECT_TRUE(Exists(made)) << made;
    ::unlink(made.c_str());
    EXPECT_FALSE(Exists(input.substr(0, input.size() - 8) + extension)) << "written beside the trace";
  }
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace cuscope::exporter::testing
