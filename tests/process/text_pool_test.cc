// The text pool the Python frame reader names frames with: one copy per text, views that stay
// valid however much is added, a hard byte bound, and threads interning the same texts at once.
#include "lib/process/text_pool.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cuscope::process {
namespace {

TEST(TextPoolTest, OneCopyPerTextAndViewsThatStay) {
  TextPool pool(1 << 20);
  std::string text = "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py";
  const auto a = pool.Intern(text);
  ASSERT_TRUE(a.has_value());
  text[1] = 'X';  // the caller's buffer is not the pool's
  EXPECT_EQ(*a, "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py");
  const auto again = pool.Intern("/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->data(), a->data()) << "the same copy";
  EXPECT_EQ(pool.size(), 1u);
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(pool.Intern("name_" + std::to_string(i)).has_value());
  EXPECT_EQ(*a, "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py") << "still valid after growth";
  EXPECT_EQ(pool.Intern(*a)->data(), a->data());
  EXPECT_EQ(pool.size(), 10001u);
  const auto empty = pool.Intern("");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(TextPoolTest, TheByteBoundHoldsAtItsEdge) {
  TextPool pool(10);
  EXPECT_TRUE(pool.Intern("abcdef").has_value());  // 6
  EXPECT_FALSE(pool.Intern("ghijk").has_value()) << "6 + 5 > 10";
  EXPECT_TRUE(pool.Intern("ghij").has_value()) << "6 + 4 == 10";
  EXPECT_EQ(pool.bytes(), 10u);
  EXPECT_FALSE(pool.Intern("k").has_value());
  EXPECT_TRUE(pool.Intern("abcdef").has_value()) << "a text already there costs nothing";
  EXPECT_TRUE(pool.Intern("").has_value());
  EXPECT_EQ(pool.bytes(), 10u);
}

TEST(TextPoolTest, ThreadsInterningTheSameTextsGetTheSameCopies) {
  TextPool pool(1 << 20);
  std::vector<std::vector<const char*>> seen(8, std::vector<const char*>(500));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&pool, &seen, t] {
      for (size_t i = 0; i < 500; ++i) seen[t][i] = pool.Intern("frame_" + std::to_string(i))->data();
    });
  }
  for (auto& th : threads) th.join();
  for (size_t t = 1; t < seen.size(); ++t) EXPECT_EQ(seen[t], seen[0]) << t;
  EXPECT_EQ(pool.size(), 500u);
}

}  // namespace
}  // namespace cuscope::process
