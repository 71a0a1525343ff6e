#include "lib/cli/rank_set_options.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"

namespace cuscope::cli {

void AddRankSetOptions(ArgumentParser& parser, ranks::RankTracesOptions* options) {
  parser.Option(
      {"--step"}, "--step takes the name of an NVTX range",
      [options](const std::string& v) {
        options->summary.step_range = v;
        return v.empty() ? absl::InvalidArgumentError("--step takes the name of an NVTX range") : absl::OkStatus();
      },
      "several traces: the NVTX range that marks a step (default: the most repeated outermost range)");
  static constexpr char kJobsError[] = "-j takes a number of traces to read at once (1-256)";
  parser.Option(
      {"-j", "--jobs"}, kJobsError,
      [options](const std::string& v) {
        if (!absl::SimpleAtoi(v, &options->jobs) || options->jobs < 1 || options->jobs > 256) {
          return absl::InvalidArgumentError(kJobsError);
        }
        return absl::OkStatus();
      },
      "several traces: traces read at once (default: the cores, at most 8)");
}

}  // namespace cuscope::cli
