#include "lib/monitor/listen_address.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace cuscope::monitor {
namespace {

TEST(ListenAddressTest, APortAloneListensOnLoopbackOnly) {
  absl::StatusOr<ListenAddress> a = ParseListenAddress("9400");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->ToString(), "127.0.0.1:9400");
}

TEST(ListenAddressTest, AWiderAddressOnlyWhenWritten) {
  absl::StatusOr<ListenAddress> v4 = ParseListenAddress("0.0.0.0:0");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->ToString(), "0.0.0.0:0");
  absl::StatusOr<ListenAddress> v6 = ParseListenAddress("[::1]:9400");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_TRUE(v6->ipv6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->ToString(), "[::1]:9400");
}

TEST(ListenAddressTest, BadAddressesAreRefusedByName) {
  for (const char* bad : {"", "abc", "65536", "-1", "+80", "localhost:9400", "1.2.3:80", "::1:9400", "[::1]",
                          "[nothex]:80", "127.0.0.1:", "127.0.0.1:80x"}) {
    absl::StatusOr<ListenAddress> a = ParseListenAddress(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(a.status().message().find(std::string("\"") + bad + "\""), absl::string_view::npos) << a.status();
  }
}

}  // namespace
}  // namespace cuscope::monitor
