// Opening the files a trace names, for reading their ELF and DWARF on this machine.
//
// A trace is input: it may come from another machine, or be made to harm whoever reads it. The
// module paths of its launch stacks are opened here, never by libdw from a name, and only what
// passes these checks reaches libdw (as an open descriptor):
//
//   - opened O_RDONLY|O_NONBLOCK|O_NOFOLLOW: a FIFO or a device never blocks the reader; a module
//     path that is a symbolic link (libraries are reached through them: libfoo.so.1 -> libfoo.so.1.2)
//     is resolved once with realpath() and the final file opened the same way, so every check below
//     is made on the file read;
//   - a regular file of at most kMaxModuleBytes;
//   - an ELF header of this machine's class whose section and program header tables lie inside the
//     file, with at most kMaxSections sections (libelf allocates per section: a sparse file claiming
//     20 million took 4 GB) and no extended numbering.
//
// Separate debug files are looked up only by build id, as DebugFileForBuildId says: never through a
// module's .gnu_debuglink name (which a trace's module could point at anything) and never over the
// network (debuginfod).
#ifndef CUSCOPE_LIB_SYMBOLIZE_MODULE_FILE_H_
#define CUSCOPE_LIB_SYMBOLIZE_MODULE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cuscope::symbolize {

// Larger than any shared library with its DWARF that we know of (libtorch_cuda.so with full debug
// information is a few GB); a bound, not a size we expect.
inline constexpr uint64_t kMaxModuleBytes = 16ull << 30;
// Shared libraries and their debug files have tens of sections; this is the most ELF holds without
// extended numbering (SHN_LORESERVE).
inline constexpr uint32_t kMaxSections = 0xff00;

// The directories separate debug files are looked up under, by build id (Debian, Ubuntu, Fedora).
const std::vector<std::string>& DebugDirectories();

// Opens `path` by the rules above and returns the descriptor (the caller closes it, or hands it to
// libdw). NotFound: no such file (or not readable); FailedPrecondition: refused, and why.
absl::StatusOr<int> OpenModuleFile(const std::string& path);

// Checks the ELF header of the open regular file `fd` of `size` bytes (OpenModuleFile does).
absl::Status CheckElfShape(int fd, uint64_t size);

// "<dir>/.build-id/ab/cdef...0123.debug" for the build id's raw bytes (at least two of them).
std::string BuildIdDebugPath(std::string_view directory, std::string_view build_id);

// The separate debug file of the build `build_id` under `directories`, opened and checked as a module
// is; a symbolic link there (Fedora links .build-id entries to the files) is followed only to a file
// inside the same directory. NotFound when none is there.
absl::StatusOr<int> OpenDebugFileForBuildId(std::string_view build_id, const std::vector<std::string>& directories);

// Whether `path` lies inside one of `directories` (after resolving links), for a dwz alternate file
// a debug file names by path.
bool InsideDirectories(const std::string& path, const std::vector<std::string>& directories);

}  // namespace cuscope::symbolize

#endif  // CUSCOPE_LIB_SYMBOLIZE_MODULE_FILE_H_
