#include "lib/monitor/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/core/terminal_text.h"

namespace cuscope::monitor {
namespace {

inline constexpr char kLoopback[] = "127.0.0.1";

absl::Status Invalid(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("metrics address \"", core::ShownValue(std::string_view(text.data(), text.size())), "\": ", why,
                   " (want PORT, ADDR:PORT or [IPV6]:PORT)"));
}

// Digits only: absl::SimpleAtoi alone would also take "+80" and " 80".
bool ParsePort(absl::string_view digits, int* port) {
  if (digits.empty() || digits.size() > 5) return false;
  for (const char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(digits, port) && *port <= 65535;
}

}  // namespace

std::string ListenAddress::ToString() const {
  return ipv6 ? absl::StrCat("[", host, "]:", port) : absl::StrCat(host, ":", port);
}

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text) {
  ListenAddress address;
  absl::string_view port_text = text;
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) {
    address.host = kLoopback;
  } else {
    absl::string_view host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      address.host = std::string(host.substr(1, host.size() - 2));
      address.ipv6 = true;
      in6_addr parsed6;
      if (inet_pton(AF_INET6, address.host.c_str(), &parsed6) != 1) return Invalid(text, "not an IPv6 address");
      if (IN6_IS_ADDR_MULTICAST(&parsed6)) return Invalid(text, "a multicast address, which no server listens on");
    } else {
      address.host = std::string(host);
      in_addr parsed4;
      if (inet_pton(AF_INET, address.host.c_str(), &parsed4) != 1) {
        return Invalid(text, "not a numeric IPv4 address (IPv6 goes in brackets)");
      }
      const uint32_t host_order = ntohl(parsed4.s_addr);
      if (host_order == INADDR_BROADCAST || IN_MULTICAST(host_order)) {
        return Invalid(text, "a broadcast or multicast address, which no server listens on");
      }
    }
  }
  if (!ParsePort(port_text, &address.port)) return Invalid(text, "the port must be a number from 0 to 65535");
  return address;
}

}  // namespace cuscope::monitor
