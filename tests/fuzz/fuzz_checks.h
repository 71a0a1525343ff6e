// The properties the fuzzers check on arbitrary bytes, shared with the regression test that
// replays the seed corpus and every input a fuzzer once failed on.
//
// Each check returns an empty string when the input is handled as documented, or a description
// of what went wrong. A crash, a sanitizer report, a hang or an oversized allocation is caught by
// the fuzzer itself; these checks catch wrong answers.
#ifndef CUSCOPE_TESTS_FUZZ_FUZZ_CHECKS_H_
#define CUSCOPE_TESTS_FUZZ_FUZZ_CHECKS_H_

#include <string>
#include <string_view>

namespace cuscope::fuzz {

// The trace reader on arbitrary bytes: loading from memory and from a file agree; a refusal is
// one of the documented errors; a loaded trace accounts for every byte (complete blocks, a cut
// tail, or a reported corruption), refers only to defined ids, and every cut of a clean trace
// after its header still loads with the chunks before the cut.
std::string CheckTraceReader(std::string_view bytes);

// The analyzer end to end: if the bytes load, the analysis, its text and its JSON report are
// produced, the JSON parses back as a report.proto Report, and a cut or damaged trace is said so.
std::string CheckAnalyzer(std::string_view bytes);

}  // namespace cuscope::fuzz

#endif  // CUSCOPE_TESTS_FUZZ_FUZZ_CHECKS_H_
