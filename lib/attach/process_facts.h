// What `cuscope attach` must know of a running process before it touches it, read from /proc:
// its owner, its seccomp mode, the files it has mapped (the C library and where it is, the CUDA
// driver, cuscope itself, CUPTI), and whether another tool was injected into it at its start.
// The parsers are pure (tested on fabricated /proc text); ReadProcessFacts reads the files.
#ifndef CUSCOPE_LIB_ATTACH_PROCESS_FACTS_H_
#define CUSCOPE_LIB_ATTACH_PROCESS_FACTS_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cuscope::attach {

// One file-backed mapping of /proc/PID/maps.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  bool executable = false;
  uint64_t inode = 0;
  std::string path;
};

struct ProcessFacts {
  pid_t pid = 0;
  uint32_t uid = 0;           // real uid
  int seccomp = 0;            // 0 none, 1 strict, 2 filter
  pid_t tracer = 0;           // a debugger (or other tracer) attached now, 0 none
  char state = 0;             // "State:" letter: R, S, D, T (stopped), t (tracing stop), Z, ...
  std::string name;           // comm
  std::vector<Mapping> mappings;
  std::string injection;      // CUDA_INJECTION64_PATH at its start, "" when none

  // The load address of the mapped object whose path ends with `file_name` (e.g. "libc.so.6"):
  // the start of its mapping at file offset 0. nullopt when it is not mapped.
  std::optional<uint64_t> BaseOf(std::string_view file_name) const;
  // The path of the first mapping whose file name starts with `prefix` ("libcuda.so"), or "".
  std::string MappedFile(std::string_view prefix) const;
};

// /proc/PID/maps text: the file-backed mappings.
std::vector<Mapping> ParseMaps(std::string_view text);
// "Uid:" (real), "Seccomp:", "TracerPid:", "State:" and "Name:" of /proc/PID/status text.
void ParseStatus(std::string_view text, ProcessFacts* facts);
// /proc/PID/environ text (NUL separated): the value of `name`, or nullopt (also when set empty).
std::optional<std::string> EnvironValue(std::string_view environ, std::string_view name);

// Reads /proc/PID/{status,maps,environ}. NotFound when there is no such process; PermissionDenied
// when its files cannot be read (another user's process).
absl::StatusOr<ProcessFacts> ReadProcessFacts(pid_t pid);

}  // namespace cuscope::attach

#endif  // CUSCOPE_LIB_ATTACH_PROCESS_FACTS_H_
