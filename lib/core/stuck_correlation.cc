#include "lib/core/stuck_correlation.h"

namespace cuscope::core {

void StuckCorrelationVote::Vote(const KernelRow& k) {
  if (!Counted(k)) return;
  if (votes_ == 0) candidate_ = k.correlation_id;
  if (k.correlation_id == candidate_) {
    ++votes_;
  } else {
    --votes_;
  }
}

void StuckCorrelationVote::Count(const KernelRow& k) {
  if (!Counted(k)) return;
  ++counted_.kernels_with_id;
  counted_.kernels += k.correlation_id == candidate_;
}

std::optional<StuckCorrelation> StuckCorrelationVote::Result() const {
  if (votes_ == 0) return std::nullopt;
  if (counted_.kernels < kMinKernels || 2 * counted_.kernels <= counted_.kernels_with_id) return std::nullopt;
  StuckCorrelation out = counted_;
  out.id = candidate_;
  return out;
}

}  // namespace cuscope::core
