// The hot-kernel choice of the one-run top-down: the kernels that took the most GPU time in the
// timeline window, each a name with its grid and block (what `hot.kernels` groups by, and what
// `ncu --kernel-name ... --launch-count` would be pointed at).
//
// Pure logic over totals; the collector's writer thread feeds it and the analyzer re-reads it.
#ifndef CUSCOPE_LIB_CORE_HOT_KERNEL_CHOICE_H_
#define CUSCOPE_LIB_CORE_HOT_KERNEL_CHOICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/core/kernel_selection.h"

namespace cuscope::core {

struct HotKernelChoice {
  std::string name;  // mangled, as the kernel record has it
  uint32_t device = 0;
  LaunchShape shape;
  uint64_t total_ns = 0;
  uint64_t launches = 0;
};

// Merges totals of the same (name, device, grid, block), then returns the `n` with the most GPU
// time, hottest first. Ties go to more launches, then to the name and shape in lexical order, so
// the same input always gives the same choice. Kernels with no time are never chosen.
std::vector<HotKernelChoice> SelectHotKernels(std::vector<HotKernelChoice> totals, size_t n);

// True when a launch is one of the chosen kernels (same name, grid and block; any device).
bool IsChosen(const std::vector<HotKernelChoice>& chosen, std::string_view name, const LaunchShape& shape);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_HOT_KERNEL_CHOICE_H_
