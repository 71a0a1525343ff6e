// Loads a shared library into a running process and calls one of its functions there: the C
// library's dlopen, dlerror and dlsym called in one of its threads (RemoteThread), found at the
// offsets they have in this process's C library, which must be the same file.
//
// Each step that fails leaves the process as it was before the step: before the load, nothing is
// loaded; after it, the library stays loaded and nothing of it runs (its entry is never called).
// The thread is always given back with its registers, its floating-point state and its system call
// as they were.
#ifndef CUSCOPE_LIB_ATTACH_INJECTOR_H_
#define CUSCOPE_LIB_ATTACH_INJECTOR_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "lib/attach/process_facts.h"
#include "lib/attach/remote_thread.h"

namespace cuscope::attach {

// For tests: a step to fail on purpose, after the steps before it were taken.
enum class FailAt { kNothing, kAfterSeize, kBeforeLoad, kAfterLoad, kBeforeEntry };

struct InjectOptions {
  RemoteThread::Options thread;
  FailAt fail_at = FailAt::kNothing;
};

struct InjectReport {
  pid_t thread = 0;         // the thread the calls ran in
  uint64_t stopped_ns = 0;  // how long it was stopped
  int entry_result = 0;     // what the entry returned (an int)
};

// dlopen(`library`, RTLD_NOW) in process `facts.pid`, then `entry_symbol`(`entry_argument`): a
// function `int (const char*)`. The error names the step that failed (dlerror's line for the load).
absl::StatusOr<InjectReport> InjectLibrary(const ProcessFacts& facts, const std::string& library,
                                           const std::string& entry_symbol, const std::string& entry_argument,
                                           const InjectOptions& options = {});

}  // namespace cuscope::attach

#endif  // CUSCOPE_LIB_ATTACH_INJECTOR_H_
