// Strings from a trace reach a person's terminal escaped: a kernel, NVTX, host or command-line
// string carrying ESC or C1 sequences is shown as \x1b..., never sent raw, by analyze, dump and
// stats; JSON keeps the string (escaped the JSON way).
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/cli/commands.h"
#include "tests/cli/capture_command.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::cli {
namespace {

using test_support::Capture;
using test_support::Outcome;

constexpr char kClear[] = "evil\x1b[2J\x1b]0;owned\x07_kernel";
constexpr char kClearShown[] = "evil\\x1b[2J\\x1b]0;owned\\x07_kernel";
constexpr char kC1[] = "csi\xc2\x9b" "31m_kernel";
constexpr char kC1Shown[] = "csi\\u009b31m_kernel";

// A launch-bound loop of the hostile kernels (so they top the findings and the tables), an NVTX
// range, a host name and a command line with escapes.
std::string HostileTrace() {
  cuscope::testing::SyntheticTrace s;
  s.AddDevice(cuscope::testing::H200Device());
  s.header().mutable_session()->set_host("host\x1b[5m");
  s.header().mutable_session()->add_command_line("./app\x1b[8m");
  for (int i = 0; i < 300; ++i) {
    const double t0 = i * 30.0;
    s.Launch(i % 3 ? kClear : kC1, t0, 20, t0 + 21, 4);
  }
  s.NvtxRange("step\x1b[1A\tnvtx", 0, 9000);
  s.Api("cudaDeviceSynchronize_v3020", 9000, 40);
  return s.Write();
}

// No byte a terminal acts on: C0 controls other than the line break, DEL, and C1 as UTF-8.
bool HasRawControl(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      return true;
    }
  }
  return false;
}

TEST(TerminalOutputTest, AnalyzeShowsHostileNamesEscaped) {
  const Outcome r = Capture(RunAnalyze, {HostileTrace()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, kClearShown)) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, kC1Shown)) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_FALSE(HasRawControl(r.out));
  EXPECT_FALSE(HasRawControl(r.err));
}

TEST(TerminalOutputTest, DumpShowsHostileStringsEscaped) {
  const Outcome r = Capture(RunDump, {HostileTrace()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, kClearShown)) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, kC1Shown)) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "host\\x1b[5m")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "./app\\x1b[8m")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "step\\x1b[1A\\x09nvtx")) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_FALSE(HasRawControl(r.out));
}

TEST(TerminalOutputTest, StatsTextShowsHostileNamesEscaped) {
  const Outcome r = Capture(RunStats, {HostileTrace()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, kClearShown)) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, kC1Shown)) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_FALSE(HasRawControl(r.out));
}

TEST(TerminalOutputTest, JsonKeepsTheNameWithJsonEscapes) {
  const std::string trace = HostileTrace();
  const Outcome stats = Capture(RunStats, {"--format", "json", "--report", "cuda_gpu_kern_sum", trace});
  EXPECT_EQ(stats.code, 0);
  EXPECT_TRUE(absl::StrContains(stats.out, "evil\\u001b[2J\\u001b]0;owned\\u0007_kernel")) << stats.out;
  EXPECT_TRUE(absl::StrContains(stats.out, "csi\\u009b31m_kernel")) << stats.out;
  EXPECT_FALSE(HasRawControl(stats.out));
  const Outcome analyze = Capture(RunAnalyze, {"--format", "json", trace});
  EXPECT_EQ(analyze.code, 0);
  EXPECT_EQ(analyze.out.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace cuscope::cli
