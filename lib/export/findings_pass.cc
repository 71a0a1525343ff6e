#include "lib/export/findings_pass.h"

#include <utility>

#include "lib/analysis/analyzer.h"
#include "lib/core/trace.h"

namespace cuscope::exporter {

absl::StatusOr<std::vector<analysis::Finding>> RunFindingsPass(const std::string& path) {
  absl::StatusOr<core::Trace> trace = core::LoadTrace(path);
  if (!trace.ok()) return trace.status();
  analysis::AnalyzeOptions options;
  options.include_tables = false;  // only the findings are drawn
  analysis::Analysis analysis = analysis::Analyze(*trace, options);
  return std::move(analysis.findings);
}

}  // namespace cuscope::exporter
