// `cuscope analyze A.cuscope B.cuscope ...`: the traces of a job's ranks read and summarized by a
// few workers at once, each holding one trace at a time, and folded into one report (rank_set.h).
// Peak memory: `jobs` traces' analyses plus the summaries' fold, whatever the number of ranks.
#ifndef CUSCOPE_LIB_RANKS_RANK_TRACES_H_
#define CUSCOPE_LIB_RANKS_RANK_TRACES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/ranks/rank_set.h"
#include "lib/ranks/rank_summary.h"

namespace cuscope::ranks {

struct RankTracesOptions {
  RankSummaryOptions summary;
  int jobs = 0;  // 0: the machine's cores (at most 8: each holds a trace)
};

// Fails when no trace could be read; a trace that cannot be read among others is left out with a
// warning in the report, as is one with no GPU work when others have some (torchrun's own process,
// which imports torch, writes one; under srun it even carries a rank).
absl::StatusOr<RankSetReport> AnalyzeRankTraces(const std::vector<std::string>& paths, const RankTracesOptions& options);

}  // namespace cuscope::ranks

#endif  // CUSCOPE_LIB_RANKS_RANK_TRACES_H_
