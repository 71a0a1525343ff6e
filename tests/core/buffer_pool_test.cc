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

// A session that ended gives back what it kept for reuse; a buffer still out is not touched, and
// the pool goes on working (and counting against its cap) afterwards.
TEST(BufferPoolTest, FreeSpareGivesBackOnlyWhatIsKeptForReuse) {
  BufferPool pool(1024, 4096);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  uint8_t* c = pool.Acquire();
  pool.Release(a);
  pool.Release(b);
  EXPECT_EQ(pool.FreeSpare(), 2048u);
  EXPECT_EQ(pool.allocated_bytes(), 1024u);
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(pool.FreeSpare(), 0u);
  // The cap counts the buffer still out: three more fit, the fourth is refused.
  std::vector<uint8_t*> more;
  for (int i = 0; i < 3; ++i) {
    more.push_back(pool.Acquire());
    ASSERT_NE(more.back(), nullptr);
  }
  EXPECT_EQ(pool.Acquire(), nullptr);
  pool.Release(c);
  for (auto* m : more) pool.Release(m);
  EXPECT_EQ(pool.FreeSpare(), 4096u);
  EXPECT_EQ(pool.allocated_bytes(), 0u);
  EXPECT_EQ(pool.peak_bytes(), 4096u) << "the peak is history, not what is held";
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
