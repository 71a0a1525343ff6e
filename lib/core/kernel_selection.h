// Which kernel launches get their counters collected, with the filters ncu users know:
//
//   kernel_name       ""               every kernel
//                     "NAME"           exact match of the mangled name, the demangled name, or the
//                                      function's base name (demangled, without return type,
//                                      parameters or template arguments, with or without namespace)
//                     "regex:PATTERN"  RE2 regex (Perl-like syntax, no backreferences) searched in
//                                      the mangled or demangled name; at most kMaxRegexLength
//                                      characters
//   launch_skip       matching launches passed over before the first one profiled
//   launch_count      at most this many launches profiled in all (0 = no limit)
//   per_kernel_count  at most this many launches profiled per distinct kernel, a kernel being its
//                     name with its grid and block shape (0 = no limit). The default, 1, profiles a
//                     whole program once per kernel.
//
// Launches are counted in the order Select() sees them. Pure logic; the collector calls it from
// its launch callback under its own lock, on the program's launching thread, so matching must be
// bounded in time and stack whatever the pattern and the name: RE2 matches in linear time without
// recursion, and a name is demangled and matched once (the result is cached per name).
#ifndef CUSCOPE_LIB_CORE_KERNEL_SELECTION_H_
#define CUSCOPE_LIB_CORE_KERNEL_SELECTION_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace re2 {
class RE2;
}

namespace cuscope::core {

// Longest "regex:" pattern accepted (characters after the prefix): long enough for any name
// filter a person writes, short enough that compiling it is cheap and its nesting shallow.
inline constexpr size_t kMaxRegexLength = 1000;

struct KernelSelection {
  std::string kernel_name;
  uint64_t launch_skip = 0;
  uint64_t launch_count = 0;
  uint64_t per_kernel_count = 1;
};

struct LaunchShape {
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
};

// The demangled form of a mangled C++ name, or the name itself when it is not mangled.
std::string DemangleName(std::string_view mangled);

// "void ns::foo<int>(float*, int)" -> "ns::foo"; the input when it has no such shape.
std::string FunctionBaseName(std::string_view demangled);

// "void ns::foo<int>(float*, int)" -> "ns::foo<int>": without the return type and the parameters.
std::string FunctionNameWithTemplateArguments(std::string_view demangled);

class KernelSelector {
 public:
  // Fails, naming the problem, on a regex that does not compile or is longer than kMaxRegexLength.
  static absl::StatusOr<KernelSelector> Create(const KernelSelection& selection);

  // Counts one launch and says whether to profile it.
  bool Select(std::string_view mangled_name, const LaunchShape& shape);

  // True once launch_count launches were profiled: nothing more will be selected.
  bool Exhausted() const { return selection_.launch_count != 0 && profiled_ >= selection_.launch_count; }

  uint64_t matched() const { return matched_; }
  uint64_t profiled() const { return profiled_; }

 private:
  explicit KernelSelector(KernelSelection selection) : selection_(std::move(selection)) {}
  bool NameMatches(std::string_view mangled_name);

  KernelSelection selection_;
  std::shared_ptr<const re2::RE2> regex_;  // set for "regex:" filters
  // Name filter results by mangled name: demangling on every launch would cost microseconds.
  absl::flat_hash_map<std::string, bool> name_matches_;
  absl::flat_hash_map<std::string, uint64_t> profiled_per_kernel_;
  uint64_t matched_ = 0;
  uint64_t profiled_ = 0;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_KERNEL_SELECTION_H_
