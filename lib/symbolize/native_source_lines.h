// Native frames' source files and lines, added where a trace is read: from the DWARF line tables of
// the modules the launch stacks name, as the files lie on this machine (or their separate debug
// files under /usr/lib/debug, by build id), through elfutils' libdw, loaded when present (libdw.so.1).
// Files are opened and checked by module_file.h before libdw reads them.
//
// The collector records a native frame as module path + offset + the module's GNU build id, and
// resolves no line in the program (DWARF is large and slow to read; the writer has no time for it).
// Here each module is read once, and only when its file's build id is the frame's: a binary rebuilt
// since the run gives no line rather than a wrong one (frames without a build id, from older traces,
// are left as they are). A frame resolved keeps its module and gets source_file and line, and its
// function from the symbol table when the dynamic symbols had none (static functions, executables
// linked without -rdynamic).
#ifndef CUSCOPE_LIB_SYMBOLIZE_NATIVE_SOURCE_LINES_H_
#define CUSCOPE_LIB_SYMBOLIZE_NATIVE_SOURCE_LINES_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/dictionary.h"

namespace cuscope::symbolize {

struct SourceLineSummary {
  size_t frames_with_build_id = 0;   // native frames that could be resolved
  size_t frames_resolved = 0;        // given a line
  size_t modules_read = 0;           // files whose build id matched
  std::vector<std::string> modules_rebuilt;  // the file here has another build id
  std::vector<std::string> modules_missing;  // no such file here, or not readable as ELF
  std::vector<std::string> modules_refused;  // "PATH: why": failed module_file.h's checks (a FIFO, a huge ELF)
  bool libdw_missing = false;        // libdw.so.1 could not be loaded: nothing was resolved
};

struct Libdw;

// Resolves the native frames of `dict` that carry a build id and whose module `skip` does not name
// (the CUDA libraries: no line there would help), with libdw as LoadLibdw() finds it. Python frames
// are left alone.
SourceLineSummary AddNativeSourceLines(core::Dictionary& dict,
                                       const std::function<bool(std::string_view module)>& skip);
// The same with a given libdw (a test gives one that is not loaded).
SourceLineSummary AddNativeSourceLines(core::Dictionary& dict, const std::function<bool(std::string_view module)>& skip,
                                       const Libdw& dw);

// What a person is told about a summary, one `cuscope:` line each; none when all went well or there
// was nothing to resolve.
std::vector<std::string> SourceLineNotes(const SourceLineSummary& summary);

}  // namespace cuscope::symbolize

#endif  // CUSCOPE_LIB_SYMBOLIZE_NATIVE_SOURCE_LINES_H_
