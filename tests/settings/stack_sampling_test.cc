// The stack sampling's choices (CUSCOPE_STACKS, --stacks).
#include "lib/settings/stack_sampling.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cuscope::settings {
namespace {

TEST(StackSamplingTest, ParsesWhatTheSettingTakes) {
  EXPECT_EQ(ParseStackSampling("none")->mode, StackSampling::Mode::kNone);
  EXPECT_EQ(ParseStackSampling("all")->mode, StackSampling::Mode::kAll);
  EXPECT_EQ(ParseStackSampling("every:1")->mode, StackSampling::Mode::kAll);
  const auto every = ParseStackSampling("every:100");
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->mode, StackSampling::Mode::kEvery);
  EXPECT_EQ(every->n, 100u);
  EXPECT_EQ(every->ToString(), "every:100");
  EXPECT_EQ(ParseStackSampling("first:5")->ToString(), "first:5");
  for (const char* bad : {"some", "every:", "every:0", "first:-1", "first:x", "ALL", "every:3x"}) {
    EXPECT_FALSE(ParseStackSampling(bad).ok()) << bad;
  }
  EXPECT_TRUE(absl::StrContains(ParseStackSampling("some").status().message(), "every:N"));
}

TEST(StackSamplingTest, EachModeTakesItsLaunches) {
  LaunchSampler none(StackSampling{});
  EXPECT_FALSE(none.Take("k"));
  LaunchSampler all(*ParseStackSampling("all"));
  EXPECT_TRUE(all.Take("k"));
  LaunchSampler every(*ParseStackSampling("every:3"));
  std::vector<bool> taken;
  for (int i = 0; i < 7; ++i) taken.push_back(every.Take("k"));
  EXPECT_EQ(taken, (std::vector<bool>{true, false, false, true, false, false, true}));
  static const char kA[] = "a";
  static const char kB[] = "b";
  LaunchSampler first(*ParseStackSampling("first:2"));
  EXPECT_TRUE(first.Take(kA));
  EXPECT_TRUE(first.Take(kA));
  EXPECT_FALSE(first.Take(kA));
  EXPECT_TRUE(first.Take(kB));
}

TEST(StackSamplingTest, FirstKeepsItsCountsBoundedAndThreadSafe) {
  LaunchSampler first(*ParseStackSampling("first:1"));
  std::vector<int> kernels(LaunchSampler::kMaxKernels + 1);
  size_t taken = 0;
  for (const int& k : kernels) taken += first.Take(&k);
  EXPECT_EQ(taken, LaunchSampler::kMaxKernels) << "kernels past the bound are not sampled";
  LaunchSampler shared(*ParseStackSampling("first:1000"));
  std::atomic<int> count{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) count += shared.Take("k");
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(count.load(), 1000);
}

}  // namespace
}  // namespace cuscope::settings
