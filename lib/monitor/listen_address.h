// The address the metrics endpoint listens on, as CUSCOPE_PROMETHEUS / --prometheus give it:
//   "9400"             port 9400 on the loopback interface (127.0.0.1): the default, private;
//   "0.0.0.0:9400"     an IPv4 address: a wider one only when it is asked for;
//   "[::1]:9400"       an IPv6 address in brackets.
// Port 0 asks for a free port. Addresses are numeric (no host names): what is bound is what was
// written.
#ifndef CUSCOPE_LIB_MONITOR_LISTEN_ADDRESS_H_
#define CUSCOPE_LIB_MONITOR_LISTEN_ADDRESS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cuscope::monitor {

struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1" (no brackets)
  int port = 0;
  bool ipv6 = false;

  // "127.0.0.1:9400", "[::1]:9400": the form HTTP servers' listening-port options and people read.
  std::string ToString() const;
};

// InvalidArgument naming `text` and what is wrong with it.
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text);

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_LISTEN_ADDRESS_H_
