// cuscope::Session started and stopped from many threads at once: never two sessions active,
// every refusal says why, and the process is unharmed whether or not a GPU is present.
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cuscope/session.h"

namespace {

TEST(SessionStressTest, SixteenThreadsStartingAndStoppingNeverShareASession) {
  constexpr int kThreads = 16;
  constexpr int kRounds = 25;
  const std::string dir = ::testing::TempDir();
  std::atomic<int> active{0}, most_active{0}, started{0}, refused_silently{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        cuscope::SessionOptions options;
        options.output = dir + "/session_stress_" + std::to_string(::getpid()) + "_" + std::to_string(t);
        options.force_overwrite = true;
        options.quiet = true;
        options.flush_period_ms = 10;
        cuscope::Session session(options);
        if (!session.Start()) {
          if (session.error().empty()) refused_silently.fetch_add(1);
          continue;
        }
        started.fetch_add(1);
        const int now = active.fetch_add(1) + 1;
        int seen = most_active.load();
        while (now > seen && !most_active.compare_exchange_weak(seen, now)) {
        }
        session.Flush();
        active.fetch_sub(1);
        session.Stop();
        ::unlink(session.output_path().c_str());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(most_active.load(), 1);
  EXPECT_EQ(refused_silently.load(), 0) << "a Start failed without saying why";
  std::printf("%d of %d starts succeeded\n", started.load(), kThreads * kRounds);
}

}  // namespace
