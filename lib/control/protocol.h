// The control protocol's messages on the wire (proto/cuscope/v1/control.proto): framing, and the
// checks every request passes before anything acts on it. Pure: no sockets here.
#ifndef CUSCOPE_LIB_CONTROL_PROTOCOL_H_
#define CUSCOPE_LIB_CONTROL_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cuscope/v1/control.pb.h"

namespace cuscope::control {

// The version this build speaks (ControlRequest.protocol_version).
inline constexpr uint32_t kProtocolVersion = 1;
// A request is a few hundred bytes; anything declaring more is refused before it is read.
inline constexpr size_t kMaxRequestBytes = 64 * 1024;
// A status reply grows with the number of devices and kernel rows, never near this.
inline constexpr size_t kMaxReplyBytes = 4 * 1024 * 1024;
// The longest capture or the longest wait after a snapshot, as the in-process API allows.
inline constexpr double kMaxCaptureSeconds = 3600;
// A top-down capture: at most this many hot kernels and launches of each (as CUSCOPE_TOP_DOWN
// and CUSCOPE_TOP_DOWN_LAUNCHES allow), and its defaults.
inline constexpr uint32_t kMaxTopDownKernels = 100;
inline constexpr uint64_t kMaxTopDownLaunches = 1000;
inline constexpr uint64_t kDefaultTopDownLaunches = 3;
inline constexpr double kDefaultTopDownWaitSeconds = 10;

// A message framed as in the trace file: its byte length as a varint, then the message.
std::string Frame(const google::protobuf::MessageLite& message);

// How many leading bytes of `bytes` make one framed message: 0 when more bytes are needed to
// tell; an error when the length prefix is malformed or declares more than `max_payload`.
absl::StatusOr<size_t> FramedSize(std::string_view bytes, size_t max_payload);

// One framed request, checked: exactly one frame, a version this build speaks, a request kind it
// knows, and for a capture an absolute path without NUL and seconds within range (a window needs
// some); a top-down only on a window, with kernels, launches and its wait within range. Every refusal is an InvalidArgument whose message can be sent back as the reply's error.
absl::StatusOr<v1::ControlRequest> ParseRequest(std::string_view framed);

// One framed reply (the client's side).
absl::StatusOr<v1::ControlReply> ParseReply(std::string_view framed);

// A reply that says why a request was not carried out.
v1::ControlReply ErrorReply(absl::string_view message);

}  // namespace cuscope::control

#endif  // CUSCOPE_LIB_CONTROL_PROTOCOL_H_
