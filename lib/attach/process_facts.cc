#include "lib/attach/process_facts.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cuscope::attach {
namespace {

std::string_view FileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

absl::StatusOr<std::string> ReadProcFile(pid_t pid, const char* name) {
  const std::string path = absl::StrCat("/proc/", pid, "/", name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no process ", pid));
    return absl::PermissionDeniedError(absl::StrCat("cannot read ", path, " (another user's process?)"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<uint64_t> ProcessFacts::BaseOf(std::string_view file_name) const {
  for (const Mapping& m : mappings) {
    if (m.offset == 0 && FileName(m.path) == file_name) return m.start;
  }
  return std::nullopt;
}

std::string ProcessFacts::MappedFile(std::string_view prefix) const {
  for (const Mapping& m : mappings) {
    if (FileName(m.path).substr(0, prefix.size()) == prefix) return m.path;
  }
  return "";
}

std::vector<Mapping> ParseMaps(std::string_view text) {
  std::vector<Mapping> out;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    // start-end perms offset dev inode path
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 6 || f[5].empty() || f[5][0] != '/') continue;
    Mapping m;
    const size_t dash = f[0].find('-');
    if (dash == std::string_view::npos || !absl::SimpleHexAtoi(f[0].substr(0, dash), &m.start) ||
        !absl::SimpleHexAtoi(f[0].substr(dash + 1), &m.end) || !absl::SimpleHexAtoi(f[2], &m.offset) ||
        !absl::SimpleAtoi(f[4], &m.inode)) {
      continue;
    }
    m.executable = f[1].size() >= 3 && f[1][2] == 'x';
    // A path may hold spaces: the rest of the line after the inode.
    m.path = std::string(line.substr(static_cast<size_t>(f[5].data() - line.data())));
    out.push_back(std::move(m));
  }
  return out;
}

void ParseStatus(std::string_view text, ProcessFacts* facts) {
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    if (absl::ConsumePrefix(&line, "Uid:")) {
      std::vector<absl::string_view> ids = absl::StrSplit(absl::StripAsciiWhitespace(line), absl::ByAnyChar(" \t"),
                                                         absl::SkipEmpty());
      if (!ids.empty()) (void)absl::SimpleAtoi(ids[0], &facts->uid);
    } else if (absl::ConsumePrefix(&line, "Seccomp:")) {
      (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &facts->seccomp);
    } else if (absl::ConsumePrefix(&line, "TracerPid:")) {
      (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &facts->tracer);
    } else if (absl::ConsumePrefix(&line, "State:")) {
      const absl::string_view state = absl::StripAsciiWhitespace(line);
      if (!state.empty()) facts->state = state[0];
    } else if (absl::ConsumePrefix(&line, "Name:")) {
      facts->name = std::string(absl::StripAsciiWhitespace(line));
    }
  }
}

std::optional<std::string> EnvironValue(std::string_view environ, std::string_view name) {
  for (absl::string_view entry : absl::StrSplit(absl::string_view(environ.data(), environ.size()), '\0')) {
    if (entry.size() > name.size() && std::string_view(entry.data(), name.size()) == name && entry[name.size()] == '=') {
      if (entry.size() == name.size() + 1) return std::nullopt;  // set empty: as unset
      return std::string(entry.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

absl::StatusOr<ProcessFacts> ReadProcessFacts(pid_t pid) {
  ProcessFacts facts;
  facts.pid = pid;
  absl::StatusOr<std::string> status = ReadProcFile(pid, "status");
  if (!status.ok()) return status.status();
  ParseStatus(*status, &facts);
  absl::StatusOr<std::string> maps = ReadProcFile(pid, "maps");
  if (!maps.ok()) return maps.status();
  facts.mappings = ParseMaps(*maps);
  absl::StatusOr<std::string> environ = ReadProcFile(pid, "environ");
  if (!environ.ok()) return environ.status();
  facts.injection = EnvironValue(*environ, "CUDA_INJECTION64_PATH").value_or("");
  return facts;
}

}  // namespace cuscope::attach
