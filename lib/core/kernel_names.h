// How kernel names are shown to people. Traces, JSON and CSV keep the name CUPTI gave (mangled
// for C++ kernels); the text outputs and the HTML report show a short base name by default, the
// full demangled name or the mangled one on demand, as ncu's --print-kernel-base and nsys stats'
// base/mangled options do.
//
// The base name of "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<
// float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
// is "vectorized_elementwise_kernel<4, CUDAFunctor_add, array>": no return type, scope or
// parameters, and each template argument cut to its own base name, so that two instantiations of
// one template stay told apart while the line stays short.
#ifndef CUSCOPE_LIB_CORE_KERNEL_NAMES_H_
#define CUSCOPE_LIB_CORE_KERNEL_NAMES_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace cuscope::core {

enum class KernelNameStyle { kBase, kDemangled, kMangled };

// "base", "demangled" or "mangled"; anything else is an error naming the three.
absl::StatusOr<KernelNameStyle> ParseKernelNameStyle(std::string_view text);

// The base name of a demangled C++ function name (above); a name of no such shape (a C kernel, a
// Triton kernel) comes back as it is.
std::string KernelBaseName(std::string_view demangled);

// A kernel's name as recorded (mangled or not), shown in `style`. A mangled name that does not
// demangle is shown as it is.
std::string KernelDisplayName(std::string_view name, KernelNameStyle style);

// KernelDisplayName(name, KernelNameStyle::kBase): what the HTML report and its timeline show.
inline std::string ShortKernelName(std::string_view name) { return KernelDisplayName(name, KernelNameStyle::kBase); }

// `text` with every mangled C++ name in it ("_Z" at the start of a word) shown in `style`.
std::string RenameKernelNamesIn(std::string_view text, KernelNameStyle style);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_KERNEL_NAMES_H_
