#include "lib/monitor/figures.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace cuscope::monitor {
namespace {

// The names are label values Prometheus users write queries against: distinct and stable.
TEST(HostCauseNameTest, EveryCauseHasItsOwnName) {
  std::set<std::string> names;
  for (int c = 0; c < kHostCauseCount; ++c) names.insert(HostCauseName(static_cast<HostCause>(c)));
  EXPECT_EQ(names.size(), static_cast<size_t>(kHostCauseCount));
  EXPECT_TRUE(names.count("outside_cuda"));
  EXPECT_TRUE(names.count("sync"));
}

}  // namespace
}  // namespace cuscope::monitor
