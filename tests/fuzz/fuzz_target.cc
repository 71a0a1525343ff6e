// The libFuzzer entry point of every fuzz_* target: arbitrary bytes through one check of
// fuzz_checks.h, chosen when the target is built (CUSCOPE_FUZZ_CHECK, named CUSCOPE_FUZZ_NAME).
// A check's complaint is printed and the process aborts, so libFuzzer keeps the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "google/protobuf/stubs/logging.h"

#include "tests/fuzz/fuzz_checks.h"

// Protobuf logs every string field with invalid UTF-8 it refuses; the reader reports those blocks
// itself, and the log lines would only slow the fuzzer down.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string problem =
      cuscope::fuzz::CUSCOPE_FUZZ_CHECK(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "%s check failed: %s\n", CUSCOPE_FUZZ_NAME, problem.c_str());
    std::abort();
  }
  return 0;
}
