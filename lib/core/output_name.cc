#include "lib/core/output_name.h"

#include <cstdlib>

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/process/launch_place.h"
#include "lib/core/terminal_text.h"

namespace cuscope::core {
namespace {

constexpr const char kExtension[] = ".cuscope";

// A %q{VAR} value names part of one file: it may not climb out of the directory the pattern names
// or reach into another (a '/' or '..'), nor carry control characters (a NUL would cut the name).
// `what` names where the value came from, for the error.
absl::Status CheckVariableValue(const std::string& what, const std::string& value) {
  bool control = false;
  for (char c : value) control = control || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  if (value.find('/') == std::string::npos && value.find("..") == std::string::npos && !control) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("output name: ", what, " holds '", EscapeForTerminal(value),
                   "'; a value there may not contain '/', '..' or control characters"));
}

// Expands everything but %n, which is left as the marker "\x01".
absl::StatusOr<std::string> ExpandFixed(const std::string& pattern, const OutputNameContext& ctx, bool* has_seq) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= pattern.size()) return absl::InvalidArgumentError("output name ends with a lone '%'");
    const char e = pattern[++i];
    switch (e) {
      case 'p': absl::StrAppend(&out, ctx.pid); break;
      case 'h':
        // The host name is set by whoever administers the machine, not by the user: held to the
        // same rule as a %q value.
        if (absl::Status s = CheckVariableValue("the host name (in %h)", ctx.host); !s.ok()) return s;
        out += ctx.host;
        break;
      case '%': out.push_back('%'); break;
      case 'n': out.push_back('\x01'); *has_seq = true; break;
      case 'r': {
        // The rank as the launcher says (launch_place.h); outside a launcher, "p" and the pid, so
        // that processes still get names of their own.
        const process::LaunchPlace place = ctx.getenv ? process::LaunchPlaceFrom(ctx.getenv) : process::LaunchPlace{};
        if (place.has_rank()) {
          absl::StrAppend(&out, place.rank);
        } else {
          absl::StrAppend(&out, "p", ctx.pid);
        }
        break;
      }
      case 'q': {
        const size_t close = pattern.find('}', i);
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string::npos) {
          return absl::InvalidArgumentError("output name: %q must be followed by {VARIABLE}");
        }
        const std::string var = pattern.substr(i + 2, close - i - 2);
        auto v = ctx.getenv ? ctx.getenv(var) : std::nullopt;
        if (!v) return absl::InvalidArgumentError(absl::StrCat("output name: environment variable ", var, " is not set"));
        if (absl::Status s = CheckVariableValue(absl::StrCat("environment variable ", var, " (in %q{", var, "})"), *v);
            !s.ok()) {
          return s;
        }
        out += *v;
        i = close;
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrCat("output name: unknown escape %", std::string(1, e),
                                                       " (known: %p %h %r %n %q{VAR} %%)"));
    }
  }
  if (!absl::EndsWith(out, kExtension)) out += kExtension;
  return out;
}

std::string WithSequence(const std::string& name, int n) {
  std::string out;
  for (char c : name) {
    if (c == '\x01') {
      absl::StrAppend(&out, n);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ExpandOutputName(const std::string& pattern, const OutputNameContext& ctx) {
  bool has_seq = false;
  auto fixed = ExpandFixed(pattern, ctx, &has_seq);
  if (!fixed.ok()) return fixed.status();
  if (!has_seq) return *fixed;
  for (int n = 1; n < 100000; ++n) {
    std::string candidate = WithSequence(*fixed, n);
    if (!ctx.exists || !ctx.exists(candidate)) return candidate;
  }
  return absl::ResourceExhaustedError("output name: no free sequence number below 100000");
}

OutputNameContext CurrentProcessOutputContext() {
  OutputNameContext ctx;
  ctx.pid = static_cast<uint32_t>(::getpid());
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) == 0) ctx.host = host;
  ctx.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  ctx.exists = [](const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  };
  return ctx;
}

}  // namespace cuscope::core
