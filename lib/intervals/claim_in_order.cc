#include "lib/intervals/claim_in_order.h"

namespace cuscope::intervals {

std::vector<IntervalSet> ClaimInOrder(IntervalSet& unclaimed, std::span<const IntervalSet> claimants) {
  std::vector<IntervalSet> claimed(claimants.size());
  for (size_t c = 0; c < claimants.size() && !unclaimed.empty(); ++c) {
    if (claimants[c].empty()) continue;
    claimed[c] = Intersect(unclaimed, claimants[c]);
    if (!claimed[c].empty()) unclaimed = Subtract(unclaimed, claimed[c]);
  }
  return claimed;
}

}  // namespace cuscope::intervals
