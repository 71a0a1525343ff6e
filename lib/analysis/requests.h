// Requests (include/cuscope/request.h) in a trace: each request scope's figures, joined by
// requests::RequestLedger exactly as monitor mode joins them live, and what its slow requests
// waited behind. Built once per analysis (Analyze) or per report (`stats -r req_sum`).
#ifndef CUSCOPE_LIB_ANALYSIS_REQUESTS_H_
#define CUSCOPE_LIB_ANALYSIS_REQUESTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/table.h"
#include "lib/analysis/timeline.h"
#include "lib/requests/request_ledger.h"

namespace cuscope::analysis {

struct RequestReport {
  std::vector<requests::RequestFigures> requests;  // in the order their scopes ended
  std::vector<std::string> routes;                 // route id r is routes[r - 1]
  // The route of the scope that launched each GPU operation's call, by correlation id ("batch"
  // for a batch scope's).
  absl::flat_hash_map<uint64_t, uint32_t> owner_route;
  absl::flat_hash_map<uint64_t, bool> owner_batch;
  // Kernel time launched inside a scope (what the requests' GPU time adds up to) and outside all.
  uint64_t kernel_ns_in_scopes = 0;
  uint64_t kernel_ns_outside = 0;
  std::string_view RouteName(uint32_t route) const;
};

RequestReport BuildRequests(const Timeline& timeline);

// The GPU work of others that ran on a request's device while it queued (from its first launch to
// its first operation): kernel base names with the route that launched them ("[no request]" for
// work outside every scope), by overlapping time, most first.
std::vector<Offender> WaitedBehind(const Timeline& timeline, const RequestReport& report,
                                   const requests::RequestFigures& request, size_t top);

// req_sum: per route, the requests and the percentiles of their span, GPU time, queueing and idle,
// their GPU time summed, and a last row with the kernel time launched outside every scope.
Table RequestSummaryTable(const Timeline& timeline, const RequestReport& report);
// req_rows: every request, one row each (for CSV and pandas).
Table RequestRowsTable(const Timeline& timeline, const RequestReport& report);
// The same, building the report (for `stats`).
Table RequestSummary(const Timeline& timeline);
Table RequestRows(const Timeline& timeline);

// requests.queued and requests.slow (thresholds.h).
std::vector<Finding> RequestFindings(const Timeline& timeline, const RequestReport& report,
                                     const Thresholds& thresholds);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_REQUESTS_H_
