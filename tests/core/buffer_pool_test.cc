#include "lib/core/buffer_pool.h"

#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

TEST(BufferPoolTest, RefusesAndCountsAtTheCap) {
  BufferPool pool(1024, 4096);
  std::vector<uint8_t*> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(pool.Acquire());
    ASSERT_NE(held.back(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(held.back()) % BufferPool::kAlignment, 0u);
  }
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.refused(), 2u);
  EXPECT_EQ(pool.peak_bytes(), 4096u);
  pool.Release(held.back());
  held.pop_back();
  held.push_back(pool.Acquire());  // a released buffer is reused, not allocated anew
  EXPECT_NE(held.back(), nullptr);
  EXPECT_EQ(pool.allocated_bytes(), 4096u);
  for (auto* b : held) pool.Release(b);
}

TEST(BufferPoolTest, ReuseKeepsMemoryFlat) {
  BufferPool pool(1 << 16, 1 << 20);
  for (int i = 0; i < 10000; ++i) {
    uint8_t* b = pool.Acquire();
    ASSERT_NE(b, nullptr);
    pool.Release(b);
  }
  EXPECT_EQ(pool.allocated_bytes(), 1u << 16);
  EXPECT_EQ(pool.refused(), 0u);
}

TEST(BufferPoolTest, ConcurrentUseNeverExceedsTheCap) {
  BufferPool pool(4096, 8 * 4096);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 5000; ++i) {
        uint8_t* a = pool.Acquire();
        uint8_t* b = pool.Acquire();
        pool.Release(a);
        pool.Release(b);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(pool.peak_bytes(), 8u * 4096);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.acquired() + pool.refused(), 8u * 5000 * 2);
}

}  // namespace
}  // namespace cuscope::core
