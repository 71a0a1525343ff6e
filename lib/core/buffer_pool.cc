#include "lib/core/buffer_pool.h"

#include <algorithm>
#include <cstdlib>

namespace cuscope::core {

BufferPool::BufferPool(size_t buffer_bytes, size_t cap_bytes) : buffer_bytes_(buffer_bytes), cap_bytes_(cap_bytes) {}

BufferPool::~BufferPool() {
  for (uint8_t* b : free_) std::free(b);
}

uint8_t* BufferPool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      uint8_t* b = free_.back();
      free_.pop_back();
      ++in_use_;
      ++acquired_;
      return b;
    }
    if ((allocated_ + 1) * buffer_bytes_ > cap_bytes_) {
      ++refused_;
      return nullptr;
    }
    // Reserve the slot before allocating outside the lock.
    ++allocated_;
    ++in_use_;
    ++acquired_;
    peak_ = std::max(peak_, allocated_);
  }
  void* p = nullptr;
  if (posix_memalign(&p, kAlignment, buffer_bytes_) != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    --allocated_;
    --in_use_;
    --acquired_;
    ++refused_;
    return nullptr;
  }
  return static_cast<uint8_t*>(p);
}

void BufferPool::Release(uint8_t* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);
  --in_use_;
}

size_t BufferPool::FreeSpare() {
  std::vector<uint8_t*> spare;
  {
    std::lock_guard<std::mutex> lock(mu_);
    spare.swap(free_);
    allocated_ -= spare.size();
  }
  for (uint8_t* b : spare) std::free(b);
  return spare.size() * buffer_bytes_;
}

uint64_t BufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}
uint64_t BufferPool::acquired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return acquired_;
}
size_t BufferPool::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_ * buffer_bytes_;
}
size_t BufferPool::peak_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_ * buffer_bytes_;
}
size_t BufferPool::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

}  // namespace cuscope::core
