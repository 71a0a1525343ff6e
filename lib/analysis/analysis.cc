#include "lib/analysis/analysis.h"

#include <algorithm>

namespace cuscope::analysis {

bool Analysis::healthy() const { return worst() < Severity::kWarning; }

Severity Analysis::worst() const {
  Severity worst_seen = Severity::kInfo;
  for (const Finding& f : findings) worst_seen = std::max(worst_seen, f.severity);
  return worst_seen;
}

}  // namespace cuscope::analysis
