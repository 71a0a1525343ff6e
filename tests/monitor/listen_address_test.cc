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

// A CUSCOPE_PROMETHEUS of 100 KB: the error line quotes its first 100 characters.
TEST(ListenAddressTest, AHugeAddressIsQuotedCut) {
  const std::string huge = std::string(100'000, '9') + "x";
  absl::StatusOr<ListenAddress> a = ParseListenAddress(huge);
  ASSERT_FALSE(a.ok());
  EXPECT_LT(a.status().message().size(), 400u);
  EXPECT_NE(a.status().message().find("(100001 characters)"), absl::string_view::npos) << a.status();
}

// The review's 255.255.255.255:0 was accepted; no server listens on a broadcast or multicast address.
TEST(ListenAddressTest, BroadcastAndMulticastAddressesAreRefused) {
  for (const char* bad : {"255.255.255.255:0", "255.255.255.255:9400", "224.0.0.1:9400", "239.255.255.250:1900",
                          "[ff02::1]:9400"}) {
    absl::StatusOr<ListenAddress> a = ParseListenAddress(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_NE(a.status().message().find("multicast"), absl::string_view::npos) << a.status();
  }
  // The edges: the last address below multicast, the first above it, and every interface.
  for (const char* good : {"223.255.255.255:9400", "240.0.0.1:9400", "0.0.0.0:0", "[::]:9400"}) {
    EXPECT_TRUE(ParseListenAddress(good).ok()) << good;
  }
}

}  // namespace
}  // namespace cuscope::monitor
