// A pool of equally sized activity buffers under a hard memory cap.
//
// CUPTI asks for a buffer whenever it fills one; at the cap the pool refuses (CUPTI then drops
// records and counts them) and counts the refusal, so nothing is lost without a number. Released
// buffers are kept for reuse: a steady trace allocates a handful once and never again.
// Thread-safe; the lock is never held while calling out of the pool.
#ifndef CUSCOPE_LIB_CORE_BUFFER_POOL_H_
#define CUSCOPE_LIB_CORE_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace cuscope::core {

class BufferPool {
 public:
  // Alignment CUPTI requires of activity buffers.
  static constexpr size_t kAlignment = 8;

  BufferPool(size_t buffer_bytes, size_t cap_bytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of buffer_bytes(), or nullptr when the cap is reached (counted in refused()).
  uint8_t* Acquire();
  // Returns a buffer obtained from Acquire.
  void Release(uint8_t* buffer);
  // Frees the buffers kept for reuse (those in use stay theirs), so a session that ended gives its
  // memory back; returns the bytes freed. The pool stays usable.
  size_t FreeSpare();

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t cap_bytes() const { return cap_bytes_; }
  uint64_t refused() const;
  uint64_t acquired() const;
  // Bytes allocated now (in use and kept for reuse), and the most ever.
  size_t allocated_bytes() const;
  size_t peak_bytes() const;
  size_t in_use() const;

 private:
  const size_t buffer_bytes_;
  const size_t cap_bytes_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;
  size_t allocated_ = 0;  // buffers
  size_t in_use_ = 0;
  size_t peak_ = 0;
  uint64_t refused_ = 0;
  uint64_t acquired_ = 0;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_BUFFER_POOL_H_
