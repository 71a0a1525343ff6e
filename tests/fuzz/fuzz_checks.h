// The properties the fuzzers check on arbitrary bytes, shared with the regression test that
// replays the seed corpus and every input a fuzzer once failed on.
//
// Each check returns an empty string when the input is handled as documented, or a description
// of what went wrong. A crash, a sanitizer report, a hang or an oversized allocation is caught by
// the fuzzer itself; these checks catch wrong answers.
#ifndef CUSCOPE_TESTS_FUZZ_FUZZ_CHECKS_H_
#define CUSCOPE_TESTS_FUZZ_FUZZ_CHECKS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "lib/core/output_file.h"

namespace cuscope::fuzz {

// The trace reader on arbitrary bytes: loading from memory and from a file agree; a refusal is
// one of the documented errors; a loaded trace accounts for every byte (complete blocks, a cut
// tail, or a reported corruption), refers only to defined ids, and every cut of a clean trace
// after its header still loads with the chunks before the cut.
std::string CheckTraceReader(std::string_view bytes);

// The analyzer end to end: if the bytes load, the analysis, its text and its JSON report are
// produced, the JSON parses back as a report.proto Report, and a cut or damaged trace is said so;
// and the trace analyzed as two ranks of a job (rank_set.h) renders too.
std::string CheckAnalyzer(std::string_view bytes);

// The exporters on arbitrary bytes: Perfetto and Chrome JSON, each with and without findings. A
// trace the reader loads is exported (a cut or damaged one as far as it goes); one it refuses is
// refused by the export with the reader's error; each output is at most kExportBytesPerInputByte
// times the input's size plus kExportFixedBytes (core::TraceOutputBound: the exporter stops there
// with an error); and CheckDump holds.
std::string CheckExporter(std::string_view bytes);

// `cuscope dump` on arbitrary bytes: a trace the reader opens is dumped within the same bound, or
// stopped at it (ResourceExhausted), or as far as a damaged chunk (DataLoss).
std::string CheckDump(std::string_view bytes);

// The control socket's request parser on arbitrary bytes: a refusal is an InvalidArgument with a
// sentence to send back; an accepted request is exactly one frame, passes every documented check
// (a known kind, an absolute path without NUL, seconds in range), and reads back the same after
// being framed again.
std::string CheckControlRequest(std::string_view bytes);

// What one byte of a trace can become in an export: an empty copy row costs 2 bytes and becomes a
// slice with its arguments (about 250 bytes of JSON); the fixed part is the output's own framing
// and the tracks every trace declares. The exporter and dump enforce it (lib/core/output_file.h).
inline constexpr size_t kExportBytesPerInputByte = core::kOutputBytesPerTraceByte;
inline constexpr size_t kExportFixedBytes = core::kOutputFixedBytes;

}  // namespace cuscope::fuzz

#endif  // CUSCOPE_TESTS_FUZZ_FUZZ_CHECKS_H_
