// trace health: what the trace itself lacks, so that every figure of the analysis is read with it
// in mind. The tail cut off (a capture that died mid-write), damage after some chunk, records CUPTI
// dropped, launch stacks dropped, operations still running when the capture ended, and a session
// without final statistics, and correlation ids that tie nothing (CUPTI gave most kernels one id).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

// CUPTI counts what it could not store; with what was written that gives the share of the
// timeline that is missing (records, not time: dropped records are spread over the capture).
std::string DroppedRecordsWarning(const core::Trace& trace) {
  const uint64_t dropped = trace.stats->records_dropped_by_cupti();
  const uint64_t written = trace.stats->records_written();
  const double missing =
      dropped + written > 0 ? 100.0 * static_cast<double>(dropped) / static_cast<double>(dropped + written) : 0;
  return absl::StrFormat(
      "%d records were dropped during capture, %.1f%% of all recorded activity (%d buffer requests refused at "
      "the %s memory cap): counts, busy time and gaps are understated by up to that share; raise "
      "CUSCOPE_BUFFER_POOL_CAP or narrow the capture with --delay/--duration",
      dropped, missing, trace.stats->buffers_refused_at_cap(),
      trace.header.config().buffer_pool_cap_bytes() > 0
          ? absl::StrFormat("%d MiB", trace.header.config().buffer_pool_cap_bytes() >> 20)
          : std::string("buffer pool"));
}

}  // namespace

std::vector<std::string> TraceHealthRule(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  std::vector<std::string> warnings;
  if (trace.tail_bytes_dropped > 0) {
    warnings.push_back(absl::StrCat("the trace is cut: ", trace.tail_bytes_dropped,
                                    " bytes at its tail did not form a complete chunk and were dropped; the "
                                    "analysis covers the ",
                                    trace.chunks, " complete chunks (records up to the cut)"));
  }
  if (trace.corruption) {
    warnings.push_back(absl::StrCat("the trace is damaged after chunk ", trace.chunks, " (",
                                    trace.corruption->message(), "); everything after it is lost"));
  }
  if (trace.stats && (trace.stats->records_dropped_by_cupti() > 0 || trace.stats->buffers_refused_at_cap() > 0)) {
    warnings.push_back(DroppedRecordsWarning(trace));
  }
  if (trace.stats && trace.stats->launch_stacks_dropped() > 0) {
    warnings.push_back(absl::StrCat(
        trace.stats->launch_stacks_dropped(),
        " launch call stacks were dropped (more launches waited for the writer thread than it keeps): launch "
        "sites cover fewer launches than were sampled; sample fewer (--stacks every:N or first:K)"));
  }
  if (trace.stats && trace.stats->records_incomplete() > 0) {
    warnings.push_back(absl::StrCat(
        trace.stats->records_incomplete(),
        " operations were still running when the capture ended (the program exited or the capture window "
        "closed with work in flight): they have no end time and are not on the timeline"));
  }
  if (const auto& stuck = timeline.stuck_correlation()) {
    warnings.push_back(absl::StrFormat(
        "CUPTI gave %d of the %d kernels with a correlation id the same one (%d): kernels cannot be tied to "
        "their launch calls or told from launches replayed for metrics by it; kernels with a duration of their "
        "own are kept on the timeline, and launch figures per call are unreliable. Seen on the H200 with "
        "--top-down after --delay in a PyTorch program; a cudaProfilerStart/Stop range (-c cudaProfilerApi) "
        "or a window from the start avoids it",
        stuck->kernels, stuck->kernels_with_id, stuck->id));
  }
  if (!trace.stats && !trace.truncated() && trace.chunks > 0) {
    warnings.push_back("the trace has no final statistics: the session may not have ended cleanly");
  }
  return warnings;
}

}  // namespace cuscope::analysis
