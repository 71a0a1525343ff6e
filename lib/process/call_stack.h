// Call stacks of the calling thread: return addresses taken with a DWARF unwinder, and each
// resolved to its module and symbol.
//
// Both unwinders read the .eh_frame tables every executable and shared object carries, so neither
// needs frame pointers (the PyTorch and CUDA libraries have none):
//   - libgcc's (_Unwind_Backtrace, the one C++ exceptions use) is always there and decodes every
//     frame's unwind rule afresh: ~120 ns a frame (4.2 us for 36 frames, bench/call_stack_bench),
//     and a launch from PyTorch walks about that many through the Python, PyTorch and CUDA
//     libraries;
//   - libunwind's (unw_backtrace, libunwind.so.8, loaded at run time by UseLibunwind) keeps, per
//     thread, the rule it decoded for each return address, and walks a stack it has seen before in
//     ~9 ns a frame (0.31 us for the same 36). Its cache is keyed by address and never
//     invalidated, so it could describe code that was unloaded and replaced: once the dynamic
//     linker reports any object unloaded after libunwind was loaded, every thread goes back to
//     libgcc's for good (checked before each stack, included in the figure above).
// Both are bounded (`max` frames) and allocate nothing on the program's thread but libunwind's
// cache, once per thread that takes stacks (~256 KiB). Resolving uses the dynamic linker's tables
// (dladdr): exported and dynamic symbols by name, other code by module and offset.
#ifndef CUSCOPE_LIB_PROCESS_CALL_STACK_H_
#define CUSCOPE_LIB_PROCESS_CALL_STACK_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace cuscope::process {

// The deepest stack taken.
inline constexpr size_t kMaxCallStackFrames = 64;

// Writes the return addresses of the calling thread's frames into `out`, innermost first, leaving
// out the `skip` innermost (this function's caller's own machinery); returns how many, at most
// `max`.
size_t CaptureCallStack(uintptr_t* out, size_t max, size_t skip);

enum class Unwinder { kLibgcc, kLibunwind };

// Makes CaptureCallStack use libunwind: libunwind.so.8 from the loader's search path, else from
// the directory of the library holding this code (a deployment may ship it beside libcuscope.so).
// NotFound when neither loads (CaptureCallStack keeps libgcc's); FailedPrecondition once an
// unloaded object retired it. Any thread, any number of times.
absl::Status UseLibunwind();
// The same from a given file or soname (tests).
absl::Status UseLibunwindFrom(const std::string& library);
// Back to libgcc's unwinder.
void UseLibgcc();
// The one CaptureCallStack uses now.
Unwinder ActiveUnwinder();

struct ResolvedFrame {
  std::string module;          // the path the process mapped; empty when no module holds it
  uint64_t module_offset = 0;  // of the call instruction, from the module's load address
  std::string function;        // the symbol around it, mangled; empty when none is known
  uint64_t function_offset = 0;
  std::string build_id;        // the module's GNU build id (raw bytes); empty when it has none
};

// Where a return address's call instruction lies; the executable's own frames name its file
// (/proc/self/exe), not the argv[0] the dynamic linker reports. Takes the dynamic linker's lock:
// call it off the program's hot path (the writer thread does).
ResolvedFrame ResolveReturnAddress(uintptr_t return_address);

}  // namespace cuscope::process

#endif  // CUSCOPE_LIB_PROCESS_CALL_STACK_H_
