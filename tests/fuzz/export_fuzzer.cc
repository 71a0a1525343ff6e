// libFuzzer target: export arbitrary bytes to Perfetto and to Chrome JSON, with and without the
// findings, and check that each output stays within a multiple of the input's size.
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
      cuscope::fuzz::CheckExporter(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "export check failed: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
