// `cuscope dump`'s text: the header, then every record, one line each, in file order.
//
// Times are nanoseconds from the session's start, exact (printed as microseconds with three
// decimals). Whatever a trace holds, the text stays proportional to it: a name is cut at
// kMaxDumpNameBytes, a call stack's frames are printed the first time the stack appears (at most
// kMaxCallStackFrames of them) and by id after that, and the whole text stops at the bound of
// core::TraceOutputBound with one error.
#ifndef CUSCOPE_LIB_CLI_TRACE_DUMP_H_
#define CUSCOPE_LIB_CLI_TRACE_DUMP_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "lib/core/trace_reader.h"

namespace cuscope::cli {

inline constexpr size_t kMaxDumpNameBytes = 1024;

struct DumpOptions {
  uint64_t record_limit = UINT64_MAX;  // --limit
  uint64_t byte_bound = UINT64_MAX;    // core::TraceOutputBound of the file's size
  std::string bound_reason;            // what the error says the bound is
};

struct DumpResult {
  uint64_t records = 0;
  uint64_t bytes = 0;  // written to `out`, never more than the bound
};

// Writes the dump of `reader` to `out`. Fails when the trace is damaged past the records printed
// (DataLoss and the reader's message) or when the next line would pass options.byte_bound
// (ResourceExhausted); the lines before stay written.
absl::StatusOr<DumpResult> DumpTrace(core::TraceReader& reader, const DumpOptions& options, std::FILE* out);

// "+1234.567us": `t` after `origin` (or "-..." before it), in microseconds, exact to the nanosecond.
std::string RelativeMicroseconds(uint64_t t, uint64_t origin);

}  // namespace cuscope::cli

#endif  // CUSCOPE_LIB_CLI_TRACE_DUMP_H_
