// Helpers that build small traces in memory for the core tests.
#ifndef CUSCOPE_TESTS_CORE_TEST_TRACES_H_
#define CUSCOPE_TESTS_CORE_TEST_TRACES_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/trace_format.h"

namespace cuscope::core::testing {

inline std::string FakeApiName(v1::ApiDomain domain, uint32_t cbid) {
  return absl::StrCat(domain == v1::API_DOMAIN_DRIVER ? "cuFunc" : "cudaFunc", cbid);
}

inline KernelActivity Kernel(uint64_t start, uint64_t dur, uint64_t corr, const char* name, int grid = 4,
                             int block = 128, uint32_t stream = 7) {
  KernelActivity k;
  k.start = start;
  k.end = start + dur;
  k.correlation_id = corr;
  k.stream = stream;
  k.config.name = name;
  k.config.grid_x = grid;
  k.config.block_x = block;
  k.config.registers_per_thread = 16;
  return k;
}

inline ApiActivity Api(uint64_t start, uint64_t dur, uint64_t corr, uint32_t cbid, uint64_t tid = 100) {
  ApiActivity a;
  a.start = start;
  a.end = start + dur;
  a.domain = v1::API_DOMAIN_RUNTIME;
  a.callback_id = cbid;
  a.pid = 42;
  a.tid = tid;
  a.correlation_id = corr;
  return a;
}

// Serializes a header and the given chunks as a trace file's bytes.
inline std::string TraceBytes(const std::vector<v1::Chunk>& chunks, uint32_t version = kFormatVersion) {
  std::string out(kTraceMagic);
  v1::Block b;
  b.mutable_header()->set_format_version(version);
  b.mutable_header()->mutable_session()->set_pid(42);
  AppendFramedBlock(b, &out);
  for (const auto& c : chunks) {
    v1::Block cb;
    *cb.mutable_chunk() = c;
    AppendFramedBlock(cb, &out);
  }
  return out;
}

}  // namespace cuscope::core::testing

#endif  // CUSCOPE_TESTS_CORE_TEST_TRACES_H_
