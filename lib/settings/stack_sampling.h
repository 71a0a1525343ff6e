// Which kernel launches get their call stack taken (CUSCOPE_STACKS, --stacks): none, every one,
// one in N, or the first K of each kernel. Taking a stack costs the launching thread an unwind
// (microseconds), so a busy program samples.
#ifndef CUSCOPE_LIB_SETTINGS_STACK_SAMPLING_H_
#define CUSCOPE_LIB_SETTINGS_STACK_SAMPLING_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace cuscope::settings {

struct StackSampling {
  enum class Mode { kNone, kAll, kEvery, kFirst };
  Mode mode = Mode::kNone;
  uint64_t n = 0;  // kEvery: one launch in n; kFirst: the first n launches of each kernel

  bool on() const { return mode != Mode::kNone; }
  // As the setting reads: "none", "all", "every:N", "first:K".
  std::string ToString() const;
};

// "none", "all", "every:N" (N >= 1) or "first:K" (K >= 1).
absl::StatusOr<StackSampling> ParseStackSampling(std::string_view text);

// The decision per launch, from any thread.
class LaunchSampler {
 public:
  explicit LaunchSampler(StackSampling sampling) : sampling_(sampling) {}

  // Whether this launch's stack is taken. `kernel` names the kernel launched (a stable pointer
  // per kernel, such as CUPTI's symbol name); only kFirst reads it.
  bool Take(const void* kernel);

  // kFirst keeps a count per kernel for at most this many kernels; launches of later ones are not
  // sampled (a program that generates kernels without end keeps its memory).
  static constexpr size_t kMaxKernels = 1 << 16;

 private:
  const StackSampling sampling_;
  std::atomic<uint64_t> launches_{0};
  std::mutex mu_;
  absl::flat_hash_map<const void*, uint64_t> taken_;  // mu_
};

}  // namespace cuscope::settings

#endif  // CUSCOPE_LIB_SETTINGS_STACK_SAMPLING_H_
