// Time shared out by precedence: the one computation behind "GPU idle, by what the host was doing"
// in the analyzer's rules (gpu.idle, by API category), monitor mode's intervals and a request's idle
// time (by core::HostCause). Stretches of idle time that calls of several kinds cover at once go to
// the kind that explains them best: the first in the claimants' order.
#ifndef CUSCOPE_LIB_INTERVALS_CLAIM_IN_ORDER_H_
#define CUSCOPE_LIB_INTERVALS_CLAIM_IN_ORDER_H_

#include <span>
#include <vector>

#include "lib/intervals/interval_set.h"

namespace cuscope::intervals {

// Claimant 0 takes the stretches of `unclaimed` it covers, claimant 1 what it covers of the rest,
// and so on. Returns what each took, in the claimants' order; `unclaimed` keeps what none covered.
// The claimed sets and what is left are disjoint and together are exactly the `unclaimed` given.
std::vector<IntervalSet> ClaimInOrder(IntervalSet& unclaimed, std::span<const IntervalSet> claimants);

}  // namespace cuscope::intervals

#endif  // CUSCOPE_LIB_INTERVALS_CLAIM_IN_ORDER_H_
