// `cuscope report` pages rendered by headless Chromium: every script runs without an error, the
// page marks itself rendered, and the findings' headlines are in the rendered DOM. Exits 77
// (skipped) when no Chromium binary is found; scripts/install_chromium.sh installs Debian's.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "lib/core/kernel_names.h"
#include "lib/analysis/analyzer.h"
#include "lib/core/metric_sets.h"
#include "lib/report/html_report.h"
#include "lib/report/rank_set_page.h"
#include "lib/ranks/rank_traces.h"
#include "tests/ranks/rank_job.h"
#include "tests/report/report_test_traces.h"

namespace cuscope::report {
namespace {

std::string g_chromium;

std::optional<std::string> FindChromium() {
  if (const char* given = std::getenv("CUSCOPE_CHROMIUM"); given != nullptr && *given != '\0')
    return std::string(given);
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    std::string dirs = path;
    for (size_t begin = 0; begin <= dirs.size();) {
      size_t end = dirs.find(':', begin);
      if (end == std::string::npos) end = dirs.size();
      const std::string candidate = absl::StrCat(dirs.substr(begin, end - begin), "/", name);
      if (end > begin && access(candidate.c_str(), X_OK) == 0) return candidate;
      begin = end + 1;
    }
  }
  return std::nullopt;
}

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir ? dir : "/tmp", "/cuscope_browser_test_", getpid());
  std::filesystem::create_directories(path);
  return path;
}

std::string Quote(const std::string& s) { return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'"); }

// Runs a shell command and returns its standard output; the exit status goes to `status`.
std::string RunShell(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return out;
  }
  char buffer[65536];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int raw = pclose(pipe);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

// The DOM after the page's scripts ran (5 s of virtual time: far more than they need).
std::string RenderedDom(const std::string& html_path) {
  const std::string profile = absl::StrCat(TempDir(), "/profile");
  int status = 0;
  const std::string dom = RunShell(
      absl::StrCat("timeout 120 ", Quote(g_chromium), " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage",
                   " --user-data-dir=", Quote(profile), " --virtual-time-budget=5000 --dump-dom ", Quote(html_path),
                   " 2>/dev/null"),
      &status);
  EXPECT_EQ(status, 0) << "chromium failed on " << html_path;
  return dom;
}

// Text as Chromium serializes it inside an element.
std::string DomText(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\xc2\xa0", "&nbsp;"}});
}

void ExpectRenderedCleanly(const std::string& dom, const std::string& what) {
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << what << ": the page did not finish rendering";
  static const std::regex kEmptyErrors(R"(<div id="script-errors"[^>]*></div>)");
  EXPECT_TRUE(std::regex_search(dom, kEmptyErrors)) << what << ": script errors:\n"
                                                    << dom.substr(dom.find("id=\"script-errors\""), 2000);
}

void ExpectHeadlines(const std::string& dom, const analysis::Analysis& analysis, const std::string& what) {
  for (const analysis::Finding& f : analysis.findings) {
    // Kernel names short on the page, as in the text outputs.
    const std::string headline = core::RenameKernelNamesIn(f.headline, core::KernelNameStyle::kBase);
    EXPECT_NE(dom.find(DomText(headline)), std::string::npos) << what << ": headline not rendered: " << headline;
  }
}

std::string Source(const std::string& relative) {
  const char* dir = std::getenv("CUSCOPE_SOURCE_DIR");
  return absl::StrCat(dir ? dir : ".", "/", relative);
}

TEST(ReportBrowserTest, LaunchOverheadReportFromTheCommand) {
  const char* bin = std::getenv("CUSCOPE_BIN");
  ASSERT_NE(bin, nullptr) << "CUSCOPE_BIN names the cuscope binary (set by ctest)";
  const std::string trace_path = Source("traces/h200_examples/launch_overhead.cuscope");
  const std::string html = absl::StrCat(TempDir(), "/launch_overhead.html");
  int status = 0;
  RunShell(absl::StrCat(Quote(bin), " report ", Quote(trace_path), " -f -o ", Quote(html), " 2>&1"), &status);
  ASSERT_EQ(status, 0);

  absl::StatusOr<core::Trace> trace = core::LoadTrace(trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const analysis::Analysis analysis = analysis::Analyze(*trace, analysis::AnalyzeOptions());
  ASSERT_FALSE(analysis.findings.empty());
  const std::string dom = RenderedDom(html);
  ExpectRenderedCleanly(dom, html);
  ExpectHeadlines(dom, analysis, html);
  // Every section drew something: cards, the canvases, the roofline's "not measured" list, tables;
  // no roofline chart, as no kernel has the metrics to place on it.
  EXPECT_NE(dom.find("class=\"card\""), std::string::npos);
  EXPECT_NE(dom.find("<canvas id=\"timeline\""), std::string::npos);
  EXPECT_NE(dom.find("style=\"width: "), std::string::npos);  // the canvases were sized
  EXPECT_EQ(dom.find("<svg id=\"roofline-chart\""), std::string::npos);
  EXPECT_NE(dom.find("No kernel in this trace has metric rows"), std::string::npos);
  EXPECT_NE(dom.find("Not measured"), std::string::npos);
  // Times count from the session start.
  EXPECT_NE(dom.find("from the session start"), std::string::npos);
  EXPECT_NE(dom.find("id=\"table-cuda_gpu_kern_sum\""), std::string::npos);
  EXPECT_NE(dom.find("slices drawn for"), std::string::npos);
}

// A trace with call stacks draws the flame graph of GPU time by call path.
TEST(ReportBrowserTest, CallStacksDrawTheFlameGraph) {
  testing::SyntheticTrace t;
  for (int i = 0; i < 4; ++i) {
    const uint64_t corr = t.Api("cudaLaunchKernel_v7000", 100.0 * i, 5);
    t.Kernel(i % 2 ? "gemm" : "relu", 100.0 * i + 10, 50, 7, corr);
    t.LaunchStack(corr, {{"/lib/libcudart.so.13", "cudaLaunchKernel"},
                         {"/opt/app/trainer", i % 2 ? "_ZN5model5trainEv" : "_ZN5model8evaluateEv"},
                         {"/opt/app/trainer", "main"}});
  }
  const core::Trace trace = t.Load();
  const analysis::Timeline timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(timeline, analysis::AnalyzeOptions());
  const std::string html = absl::StrCat(TempDir(), "/stacks.html");
  std::ofstream(html) << RenderHtmlReport(timeline, analysis, "stacks");
  const std::string dom = RenderedDom(html);
  ExpectRenderedCleanly(dom, html);
  EXPECT_NE(dom.find("class=\"flame-node\""), std::string::npos);
  EXPECT_NE(dom.find(">model::train (trainer)</div>"), std::string::npos) << dom.substr(dom.find("id=\"flame\""), 800);
  EXPECT_EQ(dom.find("id=\"flame-section\" hidden"), std::string::npos) << "shown";
}

// Zoom, pan, hover, the buttons, the findings' timeline links and the tables' "show all": a script
// appended to the page drives them with synthetic events after it rendered, and records the text of
// the tooltip over the kernels of the busy stretch.
TEST(ReportBrowserTest, InteractionsRunWithoutErrors) {
  const std::string trace_path = Source("traces/h200_examples/launch_overhead.cuscope");
  absl::StatusOr<core::Trace> trace = core::LoadTrace(trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
  const analysis::Analysis analysis = analysis::Analyze(timeline, analysis::AnalyzeOptions());
  std::string page = RenderHtmlReport(timeline, analysis, trace_path);
  constexpr char kDriver[] = R"js(<script>
(function () {
  try {
    const c = document.getElementById('timeline');
    const r = c.getBoundingClientRect();
    const at = (x, y, extra) =>
      Object.assign({clientX: r.left + x, clientY: r.top + y, bubbles: true, cancelable: true}, extra || {});
    for (const dy of [-300, -300, 250]) c.dispatchEvent(new WheelEvent('wheel', at(r.width * 0.7, 40, {deltaY: dy})));
    c.dispatchEvent(new MouseEvent('mousedown', at(400, 40)));
    window.dispatchEvent(new MouseEvent('mousemove', at(300, 40)));
    window.dispatchEvent(new MouseEvent('mouseup', at(300, 40)));
    for (let y = 2; y < r.height; y += 7) window.dispatchEvent(new MouseEvent('mousemove', at(r.width * 0.8, y)));
    for (const id of ['zoom-in', 'zoom-out', 'pan-left', 'pan-right', 'zoom-reset']) {
      document.getElementById(id).click();
    }
    c.dispatchEvent(new MouseEvent('dblclick', at(500, 40)));
    document.querySelectorAll('#findings button.link').forEach((b) => b.click());
    document.querySelectorAll('#tables button').forEach((b) => b.click());
    document.getElementById('zoom-reset').click();
    // The kernel lane (below the axis and the GPU's group row) in the busy last third of the trace.
    window.dispatchEvent(new MouseEvent('mousemove', at(r.width * 0.85, 24 + 20 + 9)));
    document.body.dataset.tooltip = document.getElementById('tooltip').textContent;
    document.body.dataset.interacted = window.cuscopeErrors.length ? 'error' : 'ok';
  } catch (e) {
    window.cuscopeRecordError('interaction: ' + (e && e.stack ? e.stack : e));
  }
})();
</script>
)js";
  page.insert(page.rfind("</body>"), kDriver);
  const std::string html = absl::StrCat(TempDir(), "/interactions.html");
  std::ofstream(html) << page;
  const std::string dom = RenderedDom(html);
  ExpectRenderedCleanly(dom, html);
  EXPECT_NE(dom.find("data-interacted=\"ok\""), std::string::npos) << "the interactions did not finish";
  const std::string tooltip = "tiny_step\nkernel · GPU 0 · NVIDIA H200 · stream 13";
  EXPECT_NE(dom.find(tooltip), std::string::npos) << dom.substr(dom.find("<body"), 600);
}

TEST(ReportBrowserTest, EveryShippedTraceRenders) {
  std::vector<std::string> traces;
  for (const char* dir : {"traces", "traces/h200_examples", "traces/h100"}) {
    for (const auto& entry : std::filesystem::directory_iterator(Source(dir))) {
      if (entry.path().extension() == ".cuscope") traces.push_back(entry.path().string());
    }
  }
  ASSERT_GE(traces.size(), 33u);
  for (const std::string& path : traces) {
    absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
    ASSERT_TRUE(trace.ok()) << path << ": " << trace.status();
    const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
    const analysis::Analysis analysis = analysis::Analyze(timeline, analysis::AnalyzeOptions());
    const std::string html = absl::StrCat(TempDir(), "/", std::filesystem::path(path).parent_path().filename().string(),
                                          "_", std::filesystem::path(path).stem().string(), ".html");
    std::ofstream(html) << RenderHtmlReport(timeline, analysis, path);
    const std::string dom = RenderedDom(html);
    ExpectRenderedCleanly(dom, path);
    ExpectHeadlines(dom, analysis, path);
  }
}

// The page as a 1,400-pixel-wide window shows it, measured by a script added after the page's own
// (and a screenshot kept beside the page for a person to look at): the tables that scroll within
// their blocks, and the words of text cells and kernel verdicts drawn on more than one line.
struct Layout {
  std::string wide_tables;   // "id:scrollWidth&gt;clientWidth ..." of every table block that scrolls
  std::string broken_words;  // words of text cells and verdicts drawn on more than one line
  bool measured = false;
};

Layout MeasureAt1400Pixels(const std::string& html_path) {
  const std::string measured = absl::StrCat(html_path, ".measured.html");
  std::ifstream in(html_path);
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  page += R"(<script>
(function measure() {
  if (!document.body.dataset.rendered) { setTimeout(measure, 20); return; }
  const wide = [], broken = [];
  for (const b of document.querySelectorAll('.table-block')) {
    if (b.scrollWidth > b.clientWidth + 1) wide.push(b.id + ':' + b.scrollWidth + '>' + b.clientWidth);
  }
  for (const cell of document.querySelectorAll('td.text, .verdict p')) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.textContent.matchAll(/[^\s\-\/]+/g)) {
        const r = document.createRange();
        r.setStart(node, m.index);
        r.setEnd(node, m.index + m[0].length);
        const lines = new Set(Array.from(r.getClientRects(), (x) => Math.round(x.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  document.body.setAttribute('data-wide-tables', wide.join(' '));
  document.body.setAttribute('data-broken-words', broken.join(' '));
  document.body.setAttribute('data-measured', 'yes');
})();
</script>)";
  std::ofstream(measured) << page;
  const std::string profile = absl::StrCat(TempDir(), "/profile1400");
  int status = 0;
  const std::string flags = absl::StrCat(" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars",
                                         " --user-data-dir=", Quote(profile), " --virtual-time-budget=5000",
                                         " --window-size=1400,1000 ");
  const std::string dom =
      RunShell(absl::StrCat("timeout 120 ", Quote(g_chromium), flags, "--dump-dom ", Quote(measured), " 2>/dev/null"),
               &status);
  EXPECT_EQ(status, 0) << "chromium failed on " << measured;
  // The picture, for a person: not compared, as fonts differ from machine to machine.
  RunShell(absl::StrCat("timeout 120 ", Quote(g_chromium), flags, "--screenshot=", Quote(html_path + ".png"), " ",
                        Quote(html_path), " >/dev/null 2>&1"),
           &status);
  Layout layout;
  std::smatch m;
  if (std::regex_search(dom, m, std::regex(R"re(data-wide-tables="([^"]*)")re"))) layout.wide_tables = m[1];
  if (std::regex_search(dom, m, std::regex(R"re(data-broken-words="([^"]*)")re"))) layout.broken_words = m[1];
  layout.measured = dom.find("data-measured=\"yes\"") != std::string::npos;
  return layout;
}

TEST(ReportBrowserTest, KernelMetricsAndVerdictsFitA1400PixelWindow) {
  const char* bin = std::getenv("CUSCOPE_BIN");
  ASSERT_NE(bin, nullptr) << "CUSCOPE_BIN names the cuscope binary (set by ctest)";
  for (const char* name : {"h200_torch_gemm_metrics", "h200_kernel_internals_metrics", "h200_torch_top_down"}) {
    const std::string trace_path = Source(absl::StrCat("traces/", name, ".cuscope"));
    const std::string html = absl::StrCat(TempDir(), "/", name, ".html");
    int status = 0;
    RunShell(absl::StrCat(Quote(bin), " report ", Quote(trace_path), " -f -o ", Quote(html), " 2>&1"), &status);
    ASSERT_EQ(status, 0) << name;
    const std::string dom = RenderedDom(html);
    ExpectRenderedCleanly(dom, html);
    EXPECT_NE(dom.find("id=\"table-kern_metrics\""), std::string::npos) << name << ": no kernel-metrics table";
    const Layout layout = MeasureAt1400Pixels(html);
    ASSERT_TRUE(layout.measured) << name;
    // The kernel metrics fit; a table of 26 figures a row (cuda_kern_exec_sum, nsys's columns)
    // scrolls within its block.
    EXPECT_FALSE(absl::StrContains(layout.wide_tables, "table-kern_metrics:")) << name << ": " << layout.wide_tables;
    EXPECT_EQ(layout.broken_words, "") << name << ": words broken across lines";
  }
}

// A trace with nothing in it: every section says so instead of failing.
TEST(ReportBrowserTest, EmptyTraceRenders) {
  testing::SyntheticTrace t;
  const core::Trace trace = t.Load();
  const analysis::Timeline timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(timeline, analysis::AnalyzeOptions());
  const std::string html = absl::StrCat(TempDir(), "/empty.html");
  std::ofstream(html) << RenderHtmlReport(timeline, analysis, "empty");
  const std::string dom = RenderedDom(html);
  ExpectRenderedCleanly(dom, html);
  EXPECT_NE(dom.find("The trace holds no GPU work and no CUDA calls."), std::string::npos);
  EXPECT_NE(dom.find("No kernel in this trace has metric rows"), std::string::npos);
  EXPECT_EQ(dom.find("<svg id=\"roofline-chart\""), std::string::npos);  // no roofs without a point
}

TEST(ReportBrowserTest, RooflinePointsAreDrawn) {
  testing::SyntheticTrace t;
  t.AddDevice(testing::H200Device());
  testing::AddLaunchLoop(t, 10, 20, 4);
  t.ProfiledLaunch(testing::Config("_Z4gemmPfS_", 1024, 256), 500, 100,
                   {{std::string(core::metric::kDuration), 1e6},
                    {std::string(core::metric::kFfma), 1e9},
                    {std::string(core::metric::kDramBytes), 1e8}});
  t.ProfiledLaunch(testing::Config("_Z6streamPf", 4096, 256), 700, 100,
                   {{std::string(core::metric::kDuration), 2e5},
                    {std::string(core::metric::kFadd), 1e7},
                    {std::string(core::metric::kDramBytes), 8e8}});
  const core::Trace trace = t.Load();
  const analysis::Timeline timeline = analysis::Timeline::Build(trace);
  const analysis::Analysis analysis = analysis::Analyze(timeline, analysis::AnalyzeOptions());
  const std::string html = absl::StrCat(TempDir(), "/roofline.html");
  std::ofstream(html) << RenderHtmlReport(timeline, analysis, "synthetic roofline");
  const std::string dom = RenderedDom(html);
  ExpectRenderedCleanly(dom, html);
  ExpectHeadlines(dom, analysis, html);
  size_t circles = 0;
  for (size_t at = dom.find("<circle"); at != std::string::npos; at = dom.find("<circle", at + 1)) ++circles;
  EXPECT_EQ(circles, 2u);
  EXPECT_NE(dom.find("FP32 60.0 TFLOP/s"), std::string::npos);
  EXPECT_NE(dom.find("FP16 tensor 960 TFLOP/s"), std::string::npos);
  EXPECT_NE(dom.find("id=\"roofline-points\""), std::string::npos);
  EXPECT_NE(dom.find("gemm [grid 1024 1 1, block 256 1 1]"), std::string::npos);
}

// A job's rank traces: the ranks' chart instead of the timeline and the roofline, the straggler's
// row marked, its finding's headline rendered, and "show all" on a set too big to list at once.
TEST(ReportBrowserTest, RankSetPageDrawsTheRanks) {
  testing::Job job;
  job.ranks = 70;
  job.steps = 6;
  job.late_rank = 3;
  job.extra_compute_us = 4'000;
  ranks::RankTracesOptions options;
  absl::StatusOr<ranks::RankSetReport> set = ranks::AnalyzeRankTraces(testing::JobTraces(job), options);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_FALSE(set->findings.empty());
  std::string page = RenderRankSetHtmlReport(*set);
  constexpr char kDriver[] = R"js(<script>
document.querySelectorAll('#ranks button').forEach((b) => b.click());
document.body.dataset.rankRows = String(document.querySelectorAll('#rank-chart tbody tr').length);
</script>
)js";
  page.insert(page.rfind("</body>"), kDriver);
  const std::string html = absl::StrCat(TempDir(), "/ranks.html");
  std::ofstream(html) << page;
  const std::string dom = RenderedDom(html);
  ExpectRenderedCleanly(dom, html);
  for (const analysis::Finding& f : set->findings) {
    EXPECT_NE(dom.find(DomText(f.headline)), std::string::npos) << "headline not rendered: " << f.headline;
  }
  EXPECT_NE(dom.find("rank 3 is the straggler"), std::string::npos);
  EXPECT_NE(dom.find("id=\"ranks-section\">"), std::string::npos) << "shown";
  EXPECT_NE(dom.find("id=\"timeline-section\" hidden"), std::string::npos);
  EXPECT_NE(dom.find("id=\"roofline-section\" hidden"), std::string::npos);
  EXPECT_NE(dom.find("<tr class=\"named-rank\"><td class=\"name\""), std::string::npos);
  EXPECT_NE(dom.find(">rank 3</td>"), std::string::npos);
  EXPECT_NE(dom.find("data-rank-rows=\"70\""), std::string::npos) << "all ranks after show all";
  EXPECT_NE(dom.find("id=\"table-rank_collectives\""), std::string::npos);
  EXPECT_NE(dom.find(">70</div>"), std::string::npos) << "the ranks card";
}

}  // namespace
}  // namespace cuscope::report

int main(int argc, char** argv) {
  const std::optional<std::string> chromium = cuscope::report::FindChromium();
  if (!chromium) {
    std::printf(
        "report_browser: SKIPPED: no chromium, chromium-browser or google-chrome on PATH (or CUSCOPE_CHROMIUM); "
        "scripts/install_chromium.sh installs Debian's chromium\n");
    return 77;
  }
  cuscope::report::g_chromium = *chromium;
  std::printf("report_browser: using %s\n", chromium->c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
