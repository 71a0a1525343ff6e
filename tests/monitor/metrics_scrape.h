// A minimal HTTP client for the tests of the metrics endpoint: GET /metrics over a real TCP
// socket, and the value of one series in the text format.
#ifndef CUSCOPE_TESTS_MONITOR_METRICS_SCRAPE_H_
#define CUSCOPE_TESTS_MONITOR_METRICS_SCRAPE_H_

#include <optional>
#include <string>

namespace cuscope::monitor::testing {

// The response body, or nullopt when nothing listens at host:port (IPv4 or IPv6 host) or no whole
// response comes within `timeout_seconds`.
std::optional<std::string> Scrape(const std::string& host, int port, int timeout_seconds = 5);
// A TCP connection to host:port (IPv4) that sends nothing, as an idle client holds it; -1 on failure.
int IdleConnection(const std::string& host, int port);
// The value on the line "<series> <value>", e.g. series `cuscope_kernels_total{device="0"}`.
std::optional<double> SampleValue(const std::string& body, const std::string& series);

}  // namespace cuscope::monitor::testing

#endif  // CUSCOPE_TESTS_MONITOR_METRICS_SCRAPE_H_
