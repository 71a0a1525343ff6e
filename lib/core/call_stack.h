// Call stacks of the calling thread: return addresses taken with the C runtime's unwinder, and
// each resolved to its module and symbol.
//
// The unwinder is libgcc's (_Unwind_Backtrace, the one C++ exceptions use): it reads the
// .eh_frame tables every executable and shared object carries, so it needs no frame pointers (the
// PyTorch and CUDA libraries have none) and adds no library the program does not load already.
// It is bounded (`max` frames) and allocates nothing. Resolving uses the dynamic linker's tables
// (dladdr): exported and dynamic symbols by name, other code by module and offset.
#ifndef CUSCOPE_LIB_CORE_CALL_STACK_H_
#define CUSCOPE_LIB_CORE_CALL_STACK_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuscope::core {

// The deepest stack taken.
inline constexpr size_t kMaxCallStackFrames = 64;

// Writes the return addresses of the calling thread's frames into `out`, innermost first, leaving
// out the `skip` innermost (this function's caller's own machinery); returns how many, at most
// `max`.
size_t CaptureCallStack(uintptr_t* out, size_t max, size_t skip);

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

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_CALL_STACK_H_
