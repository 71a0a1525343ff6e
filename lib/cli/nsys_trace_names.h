// `-t`/`--trace` as nsys users type it. nsys names what it traces by API (`-t cuda,nvtx,osrt`);
// cuscope names CUPTI activity kinds (`-t kernel,memcpy,nvtx`). A list may mix both: each nsys
// name becomes the kinds that record the same things, and a name cuscope records nothing for
// (OS runtime calls, cuBLAS's own ranges, MPI) is dropped with a note saying so. Pure.
#ifndef CUSCOPE_LIB_CLI_NSYS_TRACE_NAMES_H_
#define CUSCOPE_LIB_CLI_NSYS_TRACE_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cuscope::cli {

struct TraceKinds {
  std::string kinds;                // cuscope's comma-separated activity kinds, for CUSCOPE_KINDS
  std::vector<std::string> mapped;  // per nsys name: "cuda: kernel,memcpy,...", "osrt: not recorded (...)"
};

// Translates a --trace list. Names that are cuscope kinds (or "all") pass through as written; a
// list of cuscope kinds alone comes back unchanged with nothing mapped. A name neither knows is
// left for the collector's own check, which names the kinds. Fails only when nsys names leave
// nothing to record (`-t osrt`, `-t none`).
absl::StatusOr<TraceKinds> TranslateTraceNames(absl::string_view list);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_NSYS_TRACE_NAMES_H_
