// Requests in a trace (lib/analysis/requests.h): the figures each request gets from the same join
// monitor mode makes, the req_sum and req_rows tables, and the requests.queued and requests.slow
// rules with a positive case, a negative control and both sides of their thresholds.
#include "lib/analysis/requests.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/analysis/analyzer.h"
#include "tests/analysis/synthetic_trace.h"

namespace cuscope::analysis {
namespace {

using cuscope::testing::SyntheticTrace;

constexpr uint64_t kChatThread = 1;
constexpr uint64_t kBulkThread = 2;

// `n` chat requests, one every 5 ms on thread 1: a launch, a 300 us kernel, a sync until it ends.
// With `interference`, a bulk request on thread 2 launches a 2 ms kernel just before each chat
// request's, and the chat kernel runs only once it is done (its blocks hold every SM).
void ServeChat(SyntheticTrace& s, int n, bool interference, int slow_every = 0) {
  for (int i = 0; i < n; ++i) {
    const double t = i * 5000.0;
    const bool slow = interference || (slow_every > 0 && i % slow_every == slow_every - 1);
    double kernel_start = t + 20;
    if (slow) {
      s.RequestScope(1'000'000 + i, "bulk", t, t + 2100, kBulkThread);
      const uint64_t bulk = s.Api("cudaLaunchKernel_v7000", t + 2, 3, kBulkThread);
      s.Kernel("bulk_spin_kernel", t + 6, 2000, 9, bulk);
      s.Api("cudaStreamSynchronize_v3020", t + 6, 2001, kBulkThread);
      kernel_start = t + 2006;
    }
    s.RequestScope(i, "chat", t, kernel_start + 320, kChatThread);
    const uint64_t launch = s.Api("cudaLaunchKernel_v7000", t + 10, 5, kChatThread);
    s.Kernel("chat_gemm", kernel_start, 300, 7, launch);
    s.Api("cudaStreamSynchronize_v3020", t + 16, kernel_start + 300 - (t + 16), kChatThread);
  }
}

const Finding* FindRule(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings) {
    if (f.rule_id == id) return &f;
  }
  return nullptr;
}

TEST(Requests, EachRequestGetsItsKernelsQueueAndSpan) {
  SyntheticTrace s;
  ServeChat(s, 3, /*interference=*/true);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const RequestReport report = BuildRequests(timeline);
  ASSERT_EQ(report.requests.size(), 6u);  // 3 chat, 3 bulk
  double chat_gpu = 0;
  for (const requests::RequestFigures& r : report.requests) {
    EXPECT_LE(r.gpu_ns, static_cast<double>(r.span_ns())) << r.id;
    if (report.RouteName(r.route) != "chat") continue;
    chat_gpu += r.gpu_ns;
    EXPECT_EQ(r.kernels, 1u);
    EXPECT_EQ(r.first_queue_ns(), 1'996'000u);  // launched at +10 us, ran at +2006 us
    EXPECT_EQ(r.queue_ns, 1'991'000u);          // ready when its launch returned, at +15 us
  }
  EXPECT_DOUBLE_EQ(chat_gpu, 3 * 300'000.0);
}

TEST(Requests, ABatchsKernelsAreSharedAmongItsRequests) {
  SyntheticTrace s;
  for (uint64_t id = 1; id <= 4; ++id) s.RequestScope(id, "chat", 0, 1000, 10 + id);
  s.BatchScope(1, {1, 2, 3, 4}, 100, 900, kChatThread);
  const uint64_t launch = s.Api("cudaLaunchKernel_v7000", 110, 5, kChatThread);
  s.Kernel("batched_gemm", 200, 400, 7, launch);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const RequestReport report = BuildRequests(timeline);
  ASSERT_EQ(report.requests.size(), 4u);
  for (const requests::RequestFigures& r : report.requests) {
    EXPECT_DOUBLE_EQ(r.gpu_ns, 100'000.0);
    EXPECT_EQ(r.batches, 1u);
  }
}

TEST(Requests, TablesListRoutesAndEveryRequest) {
  SyntheticTrace s;
  ServeChat(s, 12, /*interference=*/true);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const Table summary = RequestSummary(timeline);
  ASSERT_EQ(summary.rows.size(), 3u);
  EXPECT_EQ(summary.rows[0][0], "bulk");
  EXPECT_EQ(summary.rows[1][0], "chat");
  EXPECT_EQ(summary.rows[1][1], "12");
  EXPECT_EQ(summary.rows[1][7], "3600000");  // 12 x 300 us of GPU time
  EXPECT_EQ(summary.rows[1][8], "1991000");  // median queue
  EXPECT_EQ(summary.rows[2][0], "(outside requests)");
  EXPECT_EQ(summary.rows[2][7], "0");
  EXPECT_EQ(RequestRows(timeline).rows.size(), 24u);
}

TEST(Requests, QueueingBehindAnotherRoutesKernelsIsNamed) {
  SyntheticTrace s;
  ServeChat(s, 12, /*interference=*/true);
  const Analysis a = Analyze(s.Load(), AnalyzeOptions{});
  const Finding* f = FindRule(a.findings, "requests.queued");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->headline.find("route chat"), std::string::npos) << f->headline;
  ASSERT_FALSE(f->offenders.empty());
  EXPECT_EQ(f->offenders[0].name, "bulk_spin_kernel [bulk]");
  EXPECT_GE(f->severity, Severity::kWarning);
  bool table = false;
  for (const Table& t : a.tables) table = table || t.name == "req_sum";
  EXPECT_TRUE(table);
}

TEST(Requests, NoInterferenceNoQueueingFinding) {
  SyntheticTrace s;
  ServeChat(s, 12, /*interference=*/false);
  const Analysis a = Analyze(s.Load(), AnalyzeOptions{});
  EXPECT_EQ(FindRule(a.findings, "requests.queued"), nullptr);
  EXPECT_EQ(FindRule(a.findings, "requests.slow"), nullptr);
}

TEST(Requests, QueueingThresholdsHoldBothWays) {
  SyntheticTrace s;
  ServeChat(s, 12, /*interference=*/true);
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const RequestReport report = BuildRequests(timeline);
  Thresholds t;
  t.request_queue_min_us = 1990;  // the median queue is 1991 us
  EXPECT_NE(FindRule(RequestFindings(timeline, report, t), "requests.queued"), nullptr);
  t.request_queue_min_us = 1992;
  EXPECT_EQ(FindRule(RequestFindings(timeline, report, t), "requests.queued"), nullptr);
  t = Thresholds{};
  t.request_min_count = 13;  // 12 chat requests: too few to judge
  EXPECT_EQ(FindRule(RequestFindings(timeline, report, t), "requests.queued"), nullptr);
}

TEST(Requests, TheSlowTailIsComparedWithTheMedianRequest) {
  SyntheticTrace s;
  ServeChat(s, 20, /*interference=*/false, /*slow_every=*/10);  // requests 9 and 19 wait behind bulk work
  const core::Trace trace = s.Load();
  const Timeline timeline = Timeline::Build(trace);
  const RequestReport report = BuildRequests(timeline);
  const std::vector<Finding> findings = RequestFindings(timeline, report, Thresholds{});
  const Finding* f = nullptr;
  for (const Finding& x : findings) {
    if (x.rule_id == "requests.slow" && x.headline.find("route chat") != std::string::npos) f = &x;
  }
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->headline.find("queued on the GPU behind other work"), std::string::npos) << f->headline;
  EXPECT_EQ(*f->number("worst_request"), 19);
  ASSERT_FALSE(f->offenders.empty());
  EXPECT_EQ(f->offenders[0].name, "bulk_spin_kernel [bulk]");
  // The p99 request takes 2326 us against a median of 340 us: 6.84x.
  Thresholds t;
  t.request_slow_ratio = 6.8;
  bool found = false;
  for (const Finding& x : RequestFindings(timeline, report, t)) found = found || x.rule_id == "requests.slow";
  EXPECT_TRUE(found);
  t.request_slow_ratio = 6.9;
  found = false;
  for (const Finding& x : RequestFindings(timeline, report, t)) {
    found = found || (x.rule_id == "requests.slow" && x.headline.find("route chat") != std::string::npos);
  }
  EXPECT_FALSE(found);
}

}  // namespace
}  // namespace cuscope::analysis
