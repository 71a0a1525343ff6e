// BufferPool under many threads at its cap: never more buffers out than the cap allows, never one
// buffer handed to two holders, every request either served or counted as refused.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lib/core/buffer_pool.h"

namespace cuscope::core {
namespace {

constexpr size_t kBufferBytes = 512;
constexpr size_t kCapBuffers = 4;
constexpr int kThreads = 16;
constexpr int kRounds = 4000;

// Fills a buffer with the holder's mark and checks that nobody else wrote to it meanwhile.
bool FillAndCheck(uint8_t* b, uint8_t mark) {
  std::memset(b, mark, kBufferBytes);
  std::this_thread::yield();
  return std::all_of(b, b + kBufferBytes, [mark](uint8_t x) { return x == mark; });
}

TEST(BufferPoolStressTest, SixteenThreadsAtTheCapNeverExceedItNorShareABuffer) {
  BufferPool pool(kBufferBytes, kCapBuffers * kBufferBytes);
  std::atomic<int> out{0}, most_out{0};
  std::atomic<uint64_t> served{0}, refused{0}, shared{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const uint8_t mark = static_cast<uint8_t>(t + 1);
      for (int i = 0; i < kRounds; ++i) {
        // Hold two at once, as CUPTI does when it asks for a buffer before returning the last.
        uint8_t* held[2] = {pool.Acquire(), pool.Acquire()};
        for (uint8_t* b : held) {
          if (b == nullptr) {
            refused.fetch_add(1);
            continue;
          }
          served.fetch_add(1);
          const int now = out.fetch_add(1) + 1;
          int seen = most_out.load();
          while (now > seen && !most_out.compare_exchange_weak(seen, now)) {
          }
          if (!FillAndCheck(b, mark)) shared.fetch_add(1);
        }
        for (uint8_t* b : held) {
          if (b == nullptr) continue;
          out.fetch_sub(1);
          pool.Release(b);
        }
      }
    });
  }
  for (auto& th : threads) th.join();

  EXPECT_EQ(shared.load(), 0u) << "a buffer was handed to two holders at once";
  EXPECT_LE(most_out.load(), static_cast<int>(kCapBuffers));
  EXPECT_EQ(served.load() + refused.load(), 2u * kThreads * kRounds);
  EXPECT_EQ(pool.acquired(), served.load());
  EXPECT_EQ(pool.refused(), refused.load());
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_LE(pool.peak_bytes(), pool.cap_bytes());
  EXPECT_LE(pool.allocated_bytes(), pool.cap_bytes());
}

TEST(BufferPoolStressTest, AfterAStormEveryBufferIsServedAgainUpToTheCap) {
  BufferPool pool(kBufferBytes, kCapBuffers * kBufferBytes);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) pool.Release(pool.Acquire());
    });
  }
  for (auto& th : threads) th.join();
  // Nothing leaked from the pool's books: the whole cap is available again, and no more.
  std::vector<uint8_t*> held;
  for (size_t i = 0; i < kCapBuffers; ++i) {
    held.push_back(pool.Acquire());
    ASSERT_NE(held.back(), nullptr) << "buffer " << i << " of " << kCapBuffers << " refused after the storm";
  }
  const uint64_t refused_before = pool.refused();
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.refused(), refused_before + 1);
  for (uint8_t* b : held) pool.Release(b);
  EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
}  // namespace cuscope::core
