#include "lib/monitor/prometheus_exporter.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/monitor/metrics_scrape.h"

namespace cuscope::monitor {
namespace {

using testing::SampleValue;
using testing::Scrape;

IntervalFigures Interval(uint64_t busy_ns, uint64_t kernel_ns) {
  IntervalFigures f;
  f.end_ns = 1'000'000'000;
  DeviceFigures& d = f.devices.emplace_back();
  d.device = 0;
  d.busy_ns = busy_ns;
  d.idle_ns = 1'000'000'000 - busy_ns;
  d.idle_by_cause_ns[static_cast<int>(HostCause::kOutsideCuda)] = d.idle_ns;
  d.kernels = 3;
  d.kernel_gpu_ns = kernel_ns;
  KernelFigures& k = d.top_kernels.emplace_back();
  k.name = "_ZN2ns4gemmIfEEvPfi";
  k.grid = {128, 1, 1};
  k.block = {256, 1, 1};
  k.launches = 3;
  k.gpu_ns = kernel_ns;
  d.copies.push_back({v1::COPY_KIND_HTOD, v1::MEMORY_KIND_PINNED, v1::MEMORY_KIND_DEVICE, 1, 4096, 1000});
  d.counters.push_back({"nvml.power_w", v1::COUNTER_SOURCE_UNKNOWN, 2, 310, 320});
  d.counters.push_back({"nvml.sm_clock_mhz", v1::COUNTER_SOURCE_UNKNOWN, 2, 1980, 1980});
  f.launch_calls = 3;
  f.sync_calls = 1;
  f.sync_wait_ns = 250'000'000;
  return f;
}

std::unique_ptr<PrometheusExporter> StartOrDie(const std::string& address) {
  absl::StatusOr<std::unique_ptr<PrometheusExporter>> exporter = PrometheusExporter::Start(address);
  EXPECT_TRUE(exporter.ok()) << exporter.status();
  return exporter.ok() ? *std::move(exporter) : nullptr;
}

TEST(PrometheusExporterTest, ServesTheRunningTotalsWithHelpAndType) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  ASSERT_GT(exporter->port(), 0);
  exporter->Publish(Interval(400'000'000, 300'000'000));
  exporter->Publish(Interval(600'000'000, 500'000'000));

  const std::optional<std::string> body = Scrape("127.0.0.1", exporter->port());
  ASSERT_TRUE(body.has_value());
  EXPECT_NE(body->find("# HELP cuscope_gpu_busy_seconds_total "), std::string::npos) << *body;
  EXPECT_NE(body->find("# TYPE cuscope_gpu_busy_seconds_total counter"), std::string::npos);
  EXPECT_NE(body->find("# TYPE cuscope_gpu_power_watts gauge"), std::string::npos);
  EXPECT_EQ(SampleValue(*body, "cuscope_gpu_busy_seconds_total{device=\"0\"}"), 1.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_gpu_idle_seconds_total{device=\"0\",cause=\"outside_cuda\"}"), 1.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_gpu_idle_seconds_total{device=\"0\",cause=\"sync\"}"), 0.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_kernels_total{device=\"0\"}"), 6.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_kernel_gpu_seconds_total{device=\"0\",kernel=\"ns::gemm\",grid=\"128x1x1\","
                               "block=\"256x1x1\"}"),
            0.8);
  EXPECT_EQ(SampleValue(*body, "cuscope_kernel_launches_total{device=\"0\",kernel=\"ns::gemm\",grid=\"128x1x1\","
                               "block=\"256x1x1\"}"),
            6.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_copy_bytes_total{device=\"0\",kind=\"htod\",src=\"pinned\",dst=\"device\"}"),
            8192.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_sync_wait_seconds_total"), 0.5);
  EXPECT_EQ(SampleValue(*body, "cuscope_monitor_intervals_total"), 2.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_gpu_utilization_ratio{device=\"0\"}"), 0.6);
  EXPECT_EQ(SampleValue(*body, "cuscope_gpu_power_watts{device=\"0\"}"), 310.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_gpu_sm_clock_hertz{device=\"0\"}"), 1.98e9);
  // Nothing copied by memsets: no memset series until there is one.
  EXPECT_EQ(body->find("cuscope_memsets_total"), std::string::npos);
}

// Requests per route as Prometheus histograms: cumulative buckets with `le`, a count and a sum,
// added up over the intervals; the idle histogram has one series per host cause.
TEST(PrometheusExporterTest, RequestsArePerRouteHistograms) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  for (double gpu : {0.002, 0.030}) {
    IntervalFigures f = Interval(400'000'000, 300'000'000);
    RouteRequestFigures& chat = f.requests.emplace_back();
    chat.route = "chat";
    chat.requests = 1;
    chat.gpu.Add(gpu);
    chat.queue.Add(0.0001);
    chat.span.Add(0.040);
    for (int c = 0; c < kHostCauseCount; ++c) chat.idle[c].Add(c == 0 ? 0.005 : 0);
    exporter->Publish(f);
  }
  const std::optional<std::string> body = Scrape("127.0.0.1", exporter->port());
  ASSERT_TRUE(body.has_value());
  EXPECT_NE(body->find("# TYPE cuscope_request_gpu_seconds histogram"), std::string::npos) << *body;
  EXPECT_EQ(SampleValue(*body, "cuscope_request_gpu_seconds_count{route=\"chat\"}"), 2.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_gpu_seconds_sum{route=\"chat\"}"), 0.032);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_gpu_seconds_bucket{route=\"chat\",le=\"0.0025\"}"), 1.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_gpu_seconds_bucket{route=\"chat\",le=\"0.025\"}"), 1.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_gpu_seconds_bucket{route=\"chat\",le=\"0.05\"}"), 2.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_gpu_seconds_bucket{route=\"chat\",le=\"+Inf\"}"), 2.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_idle_seconds_sum{route=\"chat\",cause=\"sync\"}"), 0.01);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_idle_seconds_count{route=\"chat\",cause=\"outside_cuda\"}"), 2.0);
  EXPECT_EQ(SampleValue(*body, "cuscope_request_queue_seconds_count{route=\"chat\"}"), 2.0);
}

TEST(PrometheusExporterTest, NoRequestsNoRequestSeries) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  exporter->Publish(Interval(400'000'000, 300'000'000));
  const std::optional<std::string> body = Scrape("127.0.0.1", exporter->port());
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(body->find("cuscope_request_"), std::string::npos);
}

// Under a duty cycle the scrape says how much was recorded, what it costs, and the bounds of the
// estimates; recorded all the time, none of those series appear.
TEST(PrometheusExporterTest, ADutyCyclesEstimatesComeWithTheirBoundsAndItsCost) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  exporter->Publish(Interval(400'000'000, 300'000'000));
  std::optional<std::string> body = Scrape("127.0.0.1", exporter->port());
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(body->find("cuscope_recorded_ratio"), std::string::npos);
  EXPECT_EQ(body->find("cuscope_duty_cycle_ratio"), std::string::npos);
  EXPECT_EQ(body->find("cuscope_gpu_utilization_bound_ratio"), std::string::npos);

  IntervalFigures f = Interval(400'000'000, 300'000'000);
  f.estimated = true;
  f.observed_ns = 75'000'000;
  f.sample_windows = 8;
  f.count_bound = 0.04;
  f.devices[0].busy_share_bound = 1.5;
  exporter->Publish(f);
  exporter->PublishDutyCycle(0.075, 0.02, 0.02);
  body = Scrape("127.0.0.1", exporter->port());
  ASSERT_TRUE(body.has_value());
  EXPECT_DOUBLE_EQ(SampleValue(*body, "cuscope_recorded_ratio").value_or(-1), 0.075);
  EXPECT_DOUBLE_EQ(SampleValue(*body, "cuscope_estimate_count_bound_ratio").value_or(-1), 0.04);
  EXPECT_DOUBLE_EQ(SampleValue(*body, "cuscope_gpu_utilization_bound_ratio{device=\"0\"}").value_or(-1), 0.015);
  EXPECT_DOUBLE_EQ(SampleValue(*body, "cuscope_duty_cycle_ratio").value_or(-1), 0.075);
  EXPECT_DOUBLE_EQ(SampleValue(*body, "cuscope_estimated_overhead_ratio").value_or(-1), 0.02);
  EXPECT_DOUBLE_EQ(SampleValue(*body, "cuscope_overhead_budget_ratio").value_or(-1), 0.02);
}

// The review: two idle TCP connections from any local user stalled every scrape for about 30 s (two
// workers, civetweb's 30 s request timeout). A scrape now goes past them at once.
TEST(PrometheusExporterTest, IdleConnectionsDoNotStallAScrape) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  exporter->Publish(Interval(400'000'000, 300'000'000));
  std::vector<int> idle;
  for (int i = 0; i < 2; ++i) idle.push_back(testing::IdleConnection("127.0.0.1", exporter->port()));
  for (int fd : idle) ASSERT_GE(fd, 0);
  ::usleep(100'000);
  const auto start = std::chrono::steady_clock::now();
  const std::optional<std::string> body = Scrape("127.0.0.1", exporter->port());
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(SampleValue(*body, "cuscope_kernels_total{device=\"0\"}"), 3.0);
  EXPECT_LT(took, std::chrono::milliseconds(500));
  for (int fd : idle) ::close(fd);
}

// 224 idle connections made a scrape time out. Each worker drops an idle peer after the request
// timeout, so a scrape behind them waits about (224 / workers) x 0.5 s, well inside Prometheus'
// default scrape timeout of 10 s; and one every second keeps working while they are held.
TEST(PrometheusExporterTest, HundredsOfIdleConnectionsDelayAScrapeBySecondsNotMinutes) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  exporter->Publish(Interval(400'000'000, 300'000'000));
  std::vector<int> idle;
  for (int i = 0; i < 224; ++i) {
    const int fd = testing::IdleConnection("127.0.0.1", exporter->port());
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_EQ(idle.size(), 224u);
  const auto start = std::chrono::steady_clock::now();
  const std::optional<std::string> body = Scrape("127.0.0.1", exporter->port(), 10);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(body.has_value()) << "no answer within Prometheus' default scrape timeout";
  const double expected_s = 224.0 / PrometheusExporter::kWorkers * PrometheusExporter::kRequestTimeoutMs / 1000.0;
  EXPECT_LT(took, std::chrono::milliseconds(static_cast<int>(expected_s * 1000 * 1.5) + 500));
  // Scrapes a second apart go on meanwhile.
  for (int i = 0; i < 3; ++i) {
    ::usleep(1'000'000);
    EXPECT_TRUE(Scrape("127.0.0.1", exporter->port(), 2).has_value()) << "scrape " << i;
  }
  for (int fd : idle) ::close(fd);
}

// Under a launcher every series carries the process's rank (and local rank, job id), so that a fleet's
// dashboard compares ranks; outside one, none of those labels.
TEST(PrometheusExporterTest, EverySeriesCarriesTheRankUnderALauncher) {
  process::LaunchPlace place;
  place.rank = 3;
  place.local_rank = 1;
  place.job_id = "job-7";
  auto exporter = PrometheusExporter::Start("0", kDefaultKernelLabels, LaunchLabels(place));
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  (*exporter)->Publish(Interval(400'000'000, 300'000'000));
  const std::optional<std::string> body = Scrape("127.0.0.1", (*exporter)->port());
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(SampleValue(*body, "cuscope_kernels_total{device=\"0\",rank=\"3\",local_rank=\"1\",job_id=\"job-7\"}"), 3.0)
      << *body;
  EXPECT_EQ(SampleValue(*body, "cuscope_monitor_intervals_total{rank=\"3\",local_rank=\"1\",job_id=\"job-7\"}"), 1.0);
  EXPECT_TRUE(LaunchLabels(process::LaunchPlace{}).empty()) << "outside a launcher: no labels";
}

TEST(PrometheusExporterTest, CountersNeverGoDownBetweenScrapes) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  double last = 0;
  for (int i = 0; i < 3; ++i) {
    exporter->Publish(Interval(100'000'000, 50'000'000));
    const std::optional<std::string> body = Scrape("127.0.0.1", exporter->port());
    ASSERT_TRUE(body.has_value());
    const std::optional<double> busy = SampleValue(*body, "cuscope_gpu_busy_seconds_total{device=\"0\"}");
    ASSERT_TRUE(busy.has_value());
    EXPECT_GT(*busy, last);
    last = *busy;
  }
}

// An IPv4 address of this machine other than loopback, if it has one.
std::optional<std::string> NonLoopbackAddress() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const in_addr a = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
    if ((ntohl(a.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &a, text, sizeof(text)) != nullptr) found = text;
  }
  freeifaddrs(list);
  return found;
}

TEST(PrometheusExporterTest, APortAloneIsReachableOnLoopbackOnly) {
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0");
  ASSERT_NE(exporter, nullptr);
  EXPECT_EQ(exporter->address(), absl::StrCat("127.0.0.1:", exporter->port()));
  EXPECT_TRUE(Scrape("127.0.0.1", exporter->port()).has_value());
  const std::optional<std::string> other = NonLoopbackAddress();
  if (!other) GTEST_SKIP() << "no non-loopback IPv4 address to try";
  EXPECT_FALSE(Scrape(*other, exporter->port()).has_value()) << "reachable on " << *other;
}

TEST(PrometheusExporterTest, AWiderAddressIsReachableWhereAsked) {
  const std::optional<std::string> other = NonLoopbackAddress();
  if (!other) GTEST_SKIP() << "no non-loopback IPv4 address to try";
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("0.0.0.0:0");
  ASSERT_NE(exporter, nullptr);
  EXPECT_TRUE(Scrape(*other, exporter->port()).has_value());
}

TEST(PrometheusExporterTest, ServesOverIpv6) {
  const int probe = socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 loopback{};
  loopback.sin6_family = AF_INET6;
  loopback.sin6_addr = in6addr_loopback;
  const bool has_ipv6 = probe >= 0 && bind(probe, reinterpret_cast<sockaddr*>(&loopback), sizeof(loopback)) == 0;
  if (probe >= 0) close(probe);
  if (!has_ipv6) GTEST_SKIP() << "no IPv6 loopback here";
  std::unique_ptr<PrometheusExporter> exporter = StartOrDie("[::1]:0");
  ASSERT_NE(exporter, nullptr);
  EXPECT_EQ(exporter->address(), absl::StrCat("[::1]:", exporter->port()));
  exporter->Publish(Interval(100'000'000, 50'000'000));
  const std::optional<std::string> body = Scrape("::1", exporter->port());
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(SampleValue(*body, "cuscope_monitor_intervals_total"), 1.0);
}

TEST(PrometheusExporterTest, APortInUseIsAnErrorValueWithoutServerChatter) {
  std::unique_ptr<PrometheusExporter> first = StartOrDie("0");
  ASSERT_NE(first, nullptr);
  const std::string taken = absl::StrCat("127.0.0.1:", first->port());
  ::testing::internal::CaptureStderr();
  absl::StatusOr<std::unique_ptr<PrometheusExporter>> second = PrometheusExporter::Start(taken);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(taken), absl::string_view::npos) << second.status();
  EXPECT_EQ(stderr_text, "");
  // The first one is not disturbed.
  EXPECT_TRUE(Scrape("127.0.0.1", first->port()).has_value());
}

TEST(PrometheusExporterTest, StoppingFreesThePort) {
  std::unique_ptr<PrometheusExporter> first = StartOrDie("0");
  ASSERT_NE(first, nullptr);
  const int port = first->port();
  first.reset();
  EXPECT_FALSE(Scrape("127.0.0.1", port).has_value());
  std::unique_ptr<PrometheusExporter> again = StartOrDie(absl::StrCat(port));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->port(), port);
}

TEST(PrometheusExporterTest, BadAddressesAreRefused) {
  for (const char* bad : {"localhost:9400", "99999", "1.2.3.4.5:80", "[::1"}) {
    absl::StatusOr<std::unique_ptr<PrometheusExporter>> exporter = PrometheusExporter::Start(bad);
    ASSERT_FALSE(exporter.ok()) << bad;
    EXPECT_EQ(exporter.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(exporter.status().message().find(bad), absl::string_view::npos) << exporter.status();
  }
}

TEST(PrometheusExporterTest, AnAddressNotOnThisMachineIsUnavailable) {
  // 192.0.2.0/24 is reserved for documentation: never a local address.
  absl::StatusOr<std::unique_ptr<PrometheusExporter>> exporter = PrometheusExporter::Start("192.0.2.1:0");
  ASSERT_FALSE(exporter.ok());
  EXPECT_EQ(exporter.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cuscope::monitor
