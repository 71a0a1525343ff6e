// Where kernels were launched from: the call stacks sampled at launch (CUSCOPE_STACKS), joined to
// the kernels by correlation id, and each stack's launch site, the frame a person reads first.
#ifndef CUSCOPE_LIB_ANALYSIS_LAUNCH_SITES_H_
#define CUSCOPE_LIB_ANALYSIS_LAUNCH_SITES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "lib/core/dictionary.h"
#include "lib/core/trace.h"

namespace cuscope::analysis {

// Whether a module (a path) is one of the CUDA libraries a launch passes through on its way to the
// GPU: the runtime, the driver, CUPTI, the math and communication libraries, cuscope itself. Their
// frames are how a kernel was launched, not where from.
bool IsCudaLibrary(std::string_view module);

// One frame as a person reads it: "function (module)", the function's short demangled name, or
// "module+0xOFFSET" when no symbol was found.
std::string FrameText(const core::Dictionary& dict, uint32_t frame);

// The launch site of a call stack: its innermost frame outside the CUDA libraries (the innermost
// frame when all are inside them). 0 for an unknown stack.
uint32_t LaunchSiteFrame(const core::Dictionary& dict, uint32_t stack);

// Correlation id -> call stack id, for every launch whose stack was taken.
absl::flat_hash_map<uint64_t, uint32_t> StacksByCorrelation(const core::Trace& trace);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_LAUNCH_SITES_H_
