// What the collector's CPU tests share: waiting for another thread of the collector, and reading a
// trace once its writer has finished it.
#ifndef CUSCOPE_TESTS_CUPTI_COLLECTOR_TEST_SUPPORT_H_
#define CUSCOPE_TESTS_CUPTI_COLLECTOR_TEST_SUPPORT_H_

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "lib/core/trace.h"

namespace cuscope::cupti::testing {

// Waits (up to 10 s) for a condition another thread of the collector makes true.
template <typename F>
bool Eventually(F condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

// The trace at `path` once complete (not cut, its statistics written), or an empty one after 10 s.
inline core::Trace LoadWhenComplete(const std::string& path) {
  core::Trace out;
  Eventually([&] {
    auto t = core::LoadTrace(path);
    if (!t.ok() || t->truncated() || !t->stats.has_value()) return false;
    out = *std::move(t);
    return true;
  });
  return out;
}

// A directory of one test's own under /tmp (`path()` empty when it could not be made), removed
// with what the test wrote in it when the fixture goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    std::string pattern = "/tmp/" + name + "_XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace cuscope::cupti::testing

#endif  // CUSCOPE_TESTS_CUPTI_COLLECTOR_TEST_SUPPORT_H_
