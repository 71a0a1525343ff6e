#include "lib/settings/stack_sampling.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cuscope::settings {

std::string StackSampling::ToString() const {
  switch (mode) {
    case Mode::kNone:
      return "none";
    case Mode::kAll:
      return "all";
    case Mode::kEvery:
      return absl::StrCat("every:", n);
    case Mode::kFirst:
      return absl::StrCat("first:", n);
  }
  return "none";
}

absl::StatusOr<StackSampling> ParseStackSampling(std::string_view text) {
  const absl::string_view t(text.data(), text.size());
  StackSampling s;
  if (t == "none" || t.empty()) return s;
  if (t == "all") {
    s.mode = StackSampling::Mode::kAll;
    return s;
  }
  absl::string_view count = t;
  if (absl::ConsumePrefix(&count, "every:")) {
    s.mode = StackSampling::Mode::kEvery;
  } else if (absl::ConsumePrefix(&count, "first:")) {
    s.mode = StackSampling::Mode::kFirst;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("not a stack sampling: expected none, all, every:N (one launch in N) or first:K (the first K "
                     "launches of each kernel)"));
  }
  if (!absl::SimpleAtoi(count, &s.n) || s.n == 0) {
    return absl::InvalidArgumentError("the count after the colon must be a whole number >= 1");
  }
  if (s.mode == StackSampling::Mode::kEvery && s.n == 1) s.mode = StackSampling::Mode::kAll;
  return s;
}

bool LaunchSampler::Take(const void* kernel) {
  switch (sampling_.mode) {
    case StackSampling::Mode::kNone:
      return false;
    case StackSampling::Mode::kAll:
      return true;
    case StackSampling::Mode::kEvery:
      return launches_.fetch_add(1, std::memory_order_relaxed) % sampling_.n == 0;
    case StackSampling::Mode::kFirst: {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = taken_.find(kernel);
      if (it == taken_.end()) {
        if (taken_.size() >= kMaxKernels) return false;
        it = taken_.emplace(kernel, 0).first;
      }
      if (it->second >= sampling_.n) return false;
      ++it->second;
      return true;
    }
  }
  return false;
}

}  // namespace cuscope::settings
