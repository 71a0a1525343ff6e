#include "lib/process/text_pool.h"

namespace cuscope::process {

std::optional<std::string_view> TextPool::Intern(std::string_view text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = texts_.find(text); it != texts_.end()) return std::string_view(*it);
  if (text.size() > max_bytes_ - bytes_) return std::nullopt;
  bytes_ += text.size();
  return std::string_view(*texts_.emplace(text).first);
}

size_t TextPool::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t TextPool::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return texts_.size();
}

}  // namespace cuscope::process
