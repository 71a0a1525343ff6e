// The control protocol's framing and the checks a request passes before anything acts on it.
#include "lib/control/protocol.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cuscope::control {
namespace {

using ::testing::HasSubstr;

v1::ControlRequest Capture(v1::CaptureRequest::Kind kind, const std::string& path, double seconds) {
  v1::ControlRequest r;
  r.set_protocol_version(kProtocolVersion);
  r.mutable_capture()->set_kind(kind);
  r.mutable_capture()->set_path(path);
  r.mutable_capture()->set_seconds(seconds);
  return r;
}

std::string Refusal(const v1::ControlRequest& r) {
  auto parsed = ParseRequest(Frame(r));
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(ControlProtocolTest, AFramedRequestReadsBackAsSent) {
  v1::ControlRequest r = Capture(v1::CaptureRequest::KIND_SNAPSHOT, "/tmp/a.cuscope", 2.5);
  r.mutable_capture()->set_force_overwrite(true);
  auto parsed = ParseRequest(Frame(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->capture().path(), "/tmp/a.cuscope");
  EXPECT_EQ(parsed->capture().seconds(), 2.5);
  EXPECT_TRUE(parsed->capture().force_overwrite());

  v1::ControlRequest status;
  status.set_protocol_version(1);
  status.mutable_status();
  EXPECT_TRUE(ParseRequest(Frame(status)).ok());
}

TEST(ControlProtocolTest, FramedSizeWaitsForTheWholeMessageAndRefusesOversizedOnes) {
  const std::string framed = Frame(Capture(v1::CaptureRequest::KIND_WINDOW, "/x", 1));
  for (size_t cut = 0; cut < framed.size(); ++cut) {
    auto size = FramedSize(framed.substr(0, cut), kMaxRequestBytes);
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(*size, 0u) << cut;
  }
  EXPECT_EQ(*FramedSize(framed + "tail", kMaxRequestBytes), framed.size());
  // A prefix declaring one byte more than allowed is refused before anything is read.
  std::string big;
  big.push_back(static_cast<char>(0x81));  // 64 KiB + 1 = 0x10001
  big.push_back(static_cast<char>(0x80));
  big.push_back(static_cast<char>(0x04));
  EXPECT_FALSE(FramedSize(big, kMaxRequestBytes).ok());
  std::string at_limit = "\x80\x80\x04";  // exactly 64 KiB: waits for it
  EXPECT_EQ(*FramedSize(at_limit, kMaxRequestBytes), 0u);
  // Six continuation bytes are no varint32.
  EXPECT_FALSE(FramedSize(std::string(6, static_cast<char>(0xff)), kMaxRequestBytes).ok());
}

TEST(ControlProtocolTest, MalformedFramesAreRefused) {
  const std::string framed = Frame(Capture(v1::CaptureRequest::KIND_WINDOW, "/x", 1));
  EXPECT_THAT(std::string(ParseRequest(framed.substr(0, framed.size() - 1)).status().message()), HasSubstr("cut short"));
  EXPECT_THAT(std::string(ParseRequest(framed + "x").status().message()), HasSubstr("bytes follow"));
  // A length prefix, then bytes that are no protobuf message (a field with wire type 7).
  EXPECT_THAT(std::string(ParseRequest(std::string("\x02\x0f\x0f", 3)).status().message()),
              HasSubstr("not a ControlRequest"));
  EXPECT_FALSE(ParseRequest("").ok());
}

TEST(ControlProtocolTest, VersionsNewerThanThisBuildAndEmptyRequestsAreRefused) {
  v1::ControlRequest r = Capture(v1::CaptureRequest::KIND_WINDOW, "/x", 1);
  r.set_protocol_version(kProtocolVersion + 1);
  EXPECT_THAT(Refusal(r), HasSubstr("protocol version 2 is not spoken here"));
  r.set_protocol_version(0);
  EXPECT_THAT(Refusal(r), HasSubstr("protocol version 0"));
  v1::ControlRequest nothing;
  nothing.set_protocol_version(1);
  EXPECT_THAT(Refusal(nothing), HasSubstr("asks for nothing"));
}

TEST(ControlProtocolTest, CapturesNeedAKindAnAbsolutePathAndSecondsInRange) {
  EXPECT_EQ(Refusal(Capture(v1::CaptureRequest::KIND_WINDOW, "/a", 0.001)), "");
  EXPECT_EQ(Refusal(Capture(v1::CaptureRequest::KIND_SNAPSHOT, "/a", 0)), "");  // the ring alone
  EXPECT_EQ(Refusal(Capture(v1::CaptureRequest::KIND_WINDOW, "/a", kMaxCaptureSeconds)), "");
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_WINDOW, "/a", kMaxCaptureSeconds + 0.001)),
              HasSubstr("from 0 to 3600"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_WINDOW, "/a", 0)), HasSubstr("needs its seconds"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_SNAPSHOT, "/a", -1)), HasSubstr("from 0 to 3600"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_SNAPSHOT, "/a", std::nan(""))), HasSubstr("from 0 to 3600"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_SNAPSHOT, "/a", std::numeric_limits<double>::infinity())),
              HasSubstr("from 0 to 3600"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_UNSPECIFIED, "/a", 1)), HasSubstr("window or a snapshot"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_WINDOW, "relative.cuscope", 1)), HasSubstr("absolute"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_WINDOW, "", 1)), HasSubstr("absolute"));
  EXPECT_THAT(Refusal(Capture(v1::CaptureRequest::KIND_WINDOW, std::string("/a\0b", 4), 1)), HasSubstr("NUL"));
}

TEST(ControlProtocolTest, ATopDownCaptureIsAWindowWithKernelsLaunchesAndAWaitInRange) {
  const auto top_down = [](v1::CaptureRequest::Kind kind, uint32_t kernels, uint64_t launches, double wait) {
    v1::ControlRequest r = Capture(kind, "/a", 1);
    r.mutable_capture()->set_top_down_kernels(kernels);
    r.mutable_capture()->set_top_down_launches(launches);
    r.mutable_capture()->set_top_down_wait_seconds(wait);
    return r;
  };
  EXPECT_EQ(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, 3, 0, 0)), "");  // the defaults
  EXPECT_EQ(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, kMaxTopDownKernels, kMaxTopDownLaunches,
                             kMaxCaptureSeconds)),
            "");
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, kMaxTopDownKernels + 1, 0, 0)),
              HasSubstr("1 to 100 kernels"));
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, 1, kMaxTopDownLaunches + 1, 0)),
              HasSubstr("1 to 1000 launches"));
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, 1, 1, -1)), HasSubstr("wait"));
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, 1, 1, std::nan(""))), HasSubstr("wait"));
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, 1, 1, kMaxCaptureSeconds + 1)), HasSubstr("wait"));
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_SNAPSHOT, 1, 0, 0)), HasSubstr("needs a capture window"));
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, 0, 5, 0)), HasSubstr("need its kernels"));
  EXPECT_THAT(Refusal(top_down(v1::CaptureRequest::KIND_WINDOW, 0, 0, 2)), HasSubstr("need its kernels"));
}

TEST(ControlProtocolTest, RepliesReadBackAndErrorRepliesCarryTheirSentence) {
  v1::ControlReply reply = ErrorReply("no cuscope session is active");
  auto parsed = ParseReply(Frame(reply));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->error(), "no cuscope session is active");
  EXPECT_EQ(parsed->protocol_version(), kProtocolVersion);
}

}  // namespace
}  // namespace cuscope::control
