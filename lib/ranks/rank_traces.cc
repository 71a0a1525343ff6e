#include "lib/ranks/rank_traces.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"

namespace cuscope::ranks {

absl::StatusOr<RankSetReport> AnalyzeRankTraces(const std::vector<std::string>& paths,
                                                const RankTracesOptions& options) {
  RankSetAnalyzer analyzer(options.summary.thresholds);
  std::atomic<size_t> next{0};
  std::mutex errors_mu;
  std::vector<std::string> errors;
  // Traces of processes with no GPU work: a launcher's own (torchrun's agent imports torch; under
  // srun it even has a rank, SLURM_PROCID), kept aside until it is known whether any trace has some.
  std::vector<RankSummary> idle;
  bool any_gpu_work = false;
  const auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) {
      absl::StatusOr<core::Trace> trace = core::LoadTrace(paths[i]);
      if (!trace.ok()) {
        std::lock_guard<std::mutex> lock(errors_mu);
        errors.push_back(std::string(trace.status().message()));
        continue;
      }
      const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
      RankSummary summary = SummarizeRank(timeline, paths[i], static_cast<int>(i), options.summary);
      if (timeline.devices().empty()) {
        std::lock_guard<std::mutex> lock(errors_mu);
        idle.push_back(std::move(summary));
        continue;
      }
      analyzer.Add(summary);
      std::lock_guard<std::mutex> lock(errors_mu);
      any_gpu_work = true;
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t jobs = std::min<size_t>(paths.size(), options.jobs > 0 ? static_cast<size_t>(options.jobs)
                                                                      : std::min(cores, 8u));
  std::vector<std::thread> workers;
  for (size_t j = 1; j < jobs; ++j) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
  if (errors.size() == paths.size()) {
    return absl::InvalidArgumentError(errors.empty() ? "no trace given" : errors.front());
  }
  // Without any GPU work in the set, the traces are what there is: kept.
  if (!any_gpu_work) {
    for (const RankSummary& summary : idle) analyzer.Add(summary);
    idle.clear();
  }
  std::sort(idle.begin(), idle.end(), [](const RankSummary& a, const RankSummary& b) { return a.id.index < b.id.index; });
  RankSetReport report = analyzer.Finish();
  // Each named, up to a few; the rest counted (a glob of thousands must not print thousands of lines).
  constexpr size_t kNamed = 5;
  std::vector<std::string> front;
  for (size_t i = 0; i < errors.size() && i < kNamed; ++i) front.push_back(absl::StrCat(errors[i], "; left out"));
  if (errors.size() > kNamed) front.push_back(absl::StrCat(errors.size() - kNamed, " more traces could not be read: left out"));
  report.warnings.insert(report.warnings.begin(), front.begin(), front.end());
  for (size_t i = 0; i < idle.size() && i < kNamed; ++i) {
    report.warnings.push_back(absl::StrCat(idle[i].id.path,
                                           ": no GPU work (a launcher's own process, such as torchrun's agent): left out"));
  }
  if (idle.size() > kNamed) {
    report.warnings.push_back(absl::StrCat(idle.size() - kNamed, " more traces with no GPU work: left out"));
  }
  return report;
}

}  // namespace cuscope::ranks
