// What each warp-stall reason of the `stalls` metric set means, in plain words, and what usually
// helps. The reasons are the suffixes of smsp__average_warps_issue_stalled_<reason>_per_issue_active
// (core::metric::kStallReasons).
#ifndef CUSCOPE_LIB_ANALYSIS_STALL_REASONS_H_
#define CUSCOPE_LIB_ANALYSIS_STALL_REASONS_H_

#include <string_view>

namespace cuscope::analysis {

struct StallReasonInfo {
  std::string_view reason;   // "long_scoreboard"
  std::string_view meaning;  // what the warps were waiting for
  std::string_view advice;   // what usually shortens the wait
  // False for reasons that are not a wait worth acting on: `selected` (the warp was issuing) and
  // `not_selected` (it was ready but another warp issued: the scheduler had work).
  bool actionable = true;
};

// The description of a reason; a generic one for a reason this version does not know.
const StallReasonInfo& DescribeStall(std::string_view reason);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_STALL_REASONS_H_
