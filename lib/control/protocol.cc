#include "lib/control/protocol.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"

namespace cuscope::control {
namespace {

// The payload of one framed message, or why the bytes are not exactly one.
absl::StatusOr<std::string_view> Payload(std::string_view framed, size_t max_payload) {
  auto size = FramedSize(framed, max_payload);
  if (!size.ok()) return size.status();
  if (*size == 0) return absl::InvalidArgumentError("the message is cut short");
  if (*size != framed.size()) return absl::InvalidArgumentError("bytes follow the message");
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(framed.data()),
                                            static_cast<int>(framed.size()));
  uint32_t length = 0;
  in.ReadVarint32(&length);
  return framed.substr(framed.size() - length);
}

absl::Status CheckCapture(const v1::CaptureRequest& c) {
  if (c.kind() != v1::CaptureRequest::KIND_WINDOW && c.kind() != v1::CaptureRequest::KIND_SNAPSHOT) {
    return absl::InvalidArgumentError("a capture must be a window or a snapshot");
  }
  if (c.path().empty() || c.path()[0] != '/') {
    return absl::InvalidArgumentError("a capture's path must be absolute");
  }
  if (c.path().find('\0') != std::string::npos) return absl::InvalidArgumentError("a capture's path holds a NUL byte");
  if (!std::isfinite(c.seconds()) || c.seconds() < 0 || c.seconds() > kMaxCaptureSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("a capture's seconds must be from 0 to ", kMaxCaptureSeconds));
  }
  if (c.kind() == v1::CaptureRequest::KIND_WINDOW && c.seconds() == 0) {
    return absl::InvalidArgumentError("a capture window needs its seconds (--duration)");
  }
  const bool top_down = c.top_down_kernels() > 0;
  if (!top_down && (c.top_down_launches() != 0 || c.top_down_wait_seconds() != 0)) {
    return absl::InvalidArgumentError("a capture's top-down launches and wait need its kernels (--top-down)");
  }
  if (!top_down) return absl::OkStatus();
  if (c.kind() != v1::CaptureRequest::KIND_WINDOW) {
    return absl::InvalidArgumentError(
        "a top-down needs a capture window: a snapshot holds records from before the request, the kernel "
        "metrics come after it");
  }
  if (c.top_down_kernels() > kMaxTopDownKernels) {
    return absl::InvalidArgumentError(absl::StrCat("a top-down profiles 1 to ", kMaxTopDownKernels, " kernels"));
  }
  if (c.top_down_launches() > kMaxTopDownLaunches) {
    return absl::InvalidArgumentError(absl::StrCat("a top-down profiles 1 to ", kMaxTopDownLaunches,
                                                   " launches of each kernel"));
  }
  if (!std::isfinite(c.top_down_wait_seconds()) || c.top_down_wait_seconds() < 0 ||
      c.top_down_wait_seconds() > kMaxCaptureSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("a top-down's wait must be from 0 to ", kMaxCaptureSeconds, " s"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string Frame(const google::protobuf::MessageLite& message) {
  std::string out;
  const std::string body = message.SerializeAsString();
  uint8_t prefix[10];
  uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(body.size()), prefix);
  out.append(reinterpret_cast<const char*>(prefix), static_cast<size_t>(end - prefix));
  out += body;
  return out;
}

absl::StatusOr<size_t> FramedSize(std::string_view bytes, size_t max_payload) {
  uint64_t length = 0;
  size_t i = 0;
  for (;; ++i) {
    if (i == bytes.size()) return 0;  // the prefix goes on past what arrived
    if (i == 5) return absl::InvalidArgumentError("the message's length prefix is malformed");
    const auto byte = static_cast<uint8_t>(bytes[i]);
    length |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) break;
  }
  if (length > max_payload) {
    return absl::InvalidArgumentError(absl::StrCat("the message declares ", length, " bytes, more than the ",
                                                   max_payload, " allowed"));
  }
  const size_t total = i + 1 + static_cast<size_t>(length);
  return bytes.size() >= total ? total : 0;
}

absl::StatusOr<v1::ControlRequest> ParseRequest(std::string_view framed) {
  auto payload = Payload(framed, kMaxRequestBytes);
  if (!payload.ok()) return payload.status();
  v1::ControlRequest request;
  if (!request.ParseFromArray(payload->data(), static_cast<int>(payload->size()))) {
    return absl::InvalidArgumentError("the request is not a ControlRequest message");
  }
  if (request.protocol_version() == 0 || request.protocol_version() > kProtocolVersion) {
    return absl::InvalidArgumentError(absl::StrCat("protocol version ", request.protocol_version(),
                                                   " is not spoken here (this process speaks 1 to ",
                                                   kProtocolVersion, ")"));
  }
  switch (request.what_case()) {
    case v1::ControlRequest::kStatus:
    case v1::ControlRequest::kDetach:
      return request;
    case v1::ControlRequest::kCapture:
      if (auto st = CheckCapture(request.capture()); !st.ok()) return st;
      return request;
    case v1::ControlRequest::WHAT_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("the request asks for nothing this process knows");
}

absl::StatusOr<v1::ControlReply> ParseReply(std::string_view framed) {
  auto payload = Payload(framed, kMaxReplyBytes);
  if (!payload.ok()) return payload.status();
  v1::ControlReply reply;
  if (!reply.ParseFromArray(payload->data(), static_cast<int>(payload->size()))) {
    return absl::InvalidArgumentError("the reply is not a ControlReply message");
  }
  return reply;
}

v1::ControlReply ErrorReply(absl::string_view message) {
  v1::ControlReply reply;
  reply.set_protocol_version(kProtocolVersion);
  reply.set_error(std::string(message));
  return reply;
}

}  // namespace cuscope::control
