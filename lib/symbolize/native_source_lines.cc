#include "lib/symbolize/native_source_lines.h"

#include <dwarf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/core/launch_glue.h"
#include "lib/symbolize/libdw.h"
#include "lib/symbolize/module_file.h"

namespace cuscope::symbolize {
namespace {

// A compile unit's address range, in DWARF's addresses (a libdwfl address less the module's bias).
struct UnitRange {
  Dwarf_Addr low = 0;
  Dwarf_Addr high = 0;  // past the end
  Dwarf_Die unit{};
};

// One module file, read with libdwfl at its link-time addresses.
struct OpenModule {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  Dwarf_Addr first_address = 0;  // where the image's first loaded segment lies: a frame's offset counts from it
  // Read from the units themselves on the first address libdwfl finds no unit for: clang writes no
  // .debug_aranges by default, and libdwfl (elfutils 0.188) then finds no unit, hence no line, for
  // any address of the module. Sorted by `low`.
  mutable std::optional<std::vector<UnitRange>> unit_ranges;
  mutable Dwarf_Addr unit_bias = 0;
};

// More ranges than any real module has (a hostile file could declare millions): the rest unread.
constexpr size_t kMaxUnitRanges = size_t{1} << 20;

// The module's code: its executable loaded segments, at link-time addresses.
std::vector<std::pair<GElf_Addr, GElf_Addr>> CodeSegments(const Libdw& dw, Dwfl_Module* module) {
  std::vector<std::pair<GElf_Addr, GElf_Addr>> code;
  GElf_Addr bias = 0;
  Elf* elf = dw.module_getelf(module, &bias);
  size_t count = 0;
  if (elf == nullptr || dw.getphdrnum(elf, &count) != 0) return code;
  for (size_t i = 0; i < count && i < 0xffff; ++i) {
    GElf_Phdr header;
    if (dw.getphdr(elf, static_cast<int>(i), &header) == nullptr) continue;
    if (header.p_type == PT_LOAD && (header.p_flags & PF_X) != 0) {
      code.emplace_back(header.p_vaddr, header.p_vaddr + header.p_memsz);
    }
  }
  return code;
}

// Every unit's ranges that lie in the module's code: the linker leaves the ranges of code it
// discarded (unused inline functions, duplicate templates) at address 0 onwards, over the headers.
std::vector<UnitRange> ReadUnitRanges(const Libdw& dw, Dwfl_Module* module, Dwarf_Addr* bias) {
  const std::vector<std::pair<GElf_Addr, GElf_Addr>> code = CodeSegments(dw, module);
  const auto in_code = [&code](Dwarf_Addr address) {
    if (code.empty()) return true;  // no program headers to go by
    return std::any_of(code.begin(), code.end(),
                       [address](const auto& segment) { return address >= segment.first && address < segment.second; });
  };
  std::vector<UnitRange> ranges;
  for (Dwarf_Die* unit = dw.module_nextcu(module, nullptr, bias); unit != nullptr && ranges.size() < kMaxUnitRanges;
       unit = dw.module_nextcu(module, unit, bias)) {
    Dwarf_Addr base = 0, start = 0, end = 0;
    for (ptrdiff_t offset = 0; ranges.size() < kMaxUnitRanges &&
                               (offset = dw.ranges(unit, offset, &base, &start, &end)) > 0;) {
      if (start < end && in_code(start)) ranges.push_back(UnitRange{start, end, *unit});
    }
  }
  std::sort(ranges.begin(), ranges.end(), [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
  return ranges;
}

// The compile unit holding `address` (a libdwfl address) and the module's bias: libdwfl's own
// lookup, else the ranges read from the units.
Dwarf_Die* UnitAt(const Libdw& dw, const OpenModule& m, Dwarf_Addr address, Dwarf_Addr* bias) {
  if (Dwarf_Die* unit = dw.module_addrdie(m.module, address, bias); unit != nullptr) return unit;
  if (!m.unit_ranges.has_value()) m.unit_ranges = ReadUnitRanges(dw, m.module, &m.unit_bias);
  std::vector<UnitRange>& ranges = *m.unit_ranges;
  if (address < m.unit_bias) return nullptr;
  const Dwarf_Addr dwarf_address = address - m.unit_bias;
  auto it = std::upper_bound(ranges.begin(), ranges.end(), dwarf_address,
                             [](Dwarf_Addr a, const UnitRange& r) { return a < r.low; });
  // Units' ranges rarely overlap; a few steps back find the one that holds the address.
  for (int steps = 0; it != ranges.begin() && steps < 16; ++steps) {
    --it;
    if (dwarf_address < it->high) {
      *bias = m.unit_bias;
      return &it->unit;
    }
  }
  return nullptr;
}

// The file and line of `address` from its unit's line table, where libdwfl's lookup found none.
const char* LineFromUnit(const Libdw& dw, const OpenModule& m, Dwarf_Addr address, int* number) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = UnitAt(dw, m, address, &bias);
  if (unit == nullptr) return nullptr;
  Dwarf_Line* line = dw.getsrc_die(unit, address - bias);
  if (line == nullptr || dw.lineno(line, number) != 0) return nullptr;
  return dw.linesrc(line, nullptr, nullptr);
}

// libdwfl asks for a module's separate debug file here (its standard search would follow the
// module's .gnu_debuglink name anywhere, and ask debuginfod servers): by the module's build id under
// the debug directories; a dwz alternate file (named by the debug file, CRC 0) only inside them.
int FindDebugFile(Dwfl_Module* module, void** /*userdata*/, const char* /*module_name*/, Dwarf_Addr /*base*/,
                  const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                  char** debuginfo_file_name) {
  *debuginfo_file_name = nullptr;
  absl::StatusOr<int> fd = absl::NotFoundError("");
  std::string path;
  if (debuglink_file != nullptr && debuglink_crc == 0) {
    path = debuglink_file;
    if (!path.empty() && path.front() != '/' && file_name != nullptr) {
      const std::string dir = file_name;
      path = absl::StrCat(dir.substr(0, dir.find_last_of('/') + 1), path);
    }
    if (InsideDirectories(path, DebugDirectories())) fd = OpenModuleFile(path);
  } else {
    const unsigned char* bits = nullptr;
    GElf_Addr note_address = 0;
    const int size = LoadLibdw().module_build_id(module, &bits, &note_address);
    if (size <= 0) return -1;
    const std::string build_id(reinterpret_cast<const char*>(bits), static_cast<size_t>(size));
    fd = OpenDebugFileForBuildId(build_id, DebugDirectories());
    path = BuildIdDebugPath(DebugDirectories().front(), build_id);
  }
  if (!fd.ok()) return -1;
  *debuginfo_file_name = ::strdup(path.c_str());
  return *fd;
}

// No module is found by name: each is reported with a descriptor opened here.
int FindNoElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }

class ModuleFiles {
 public:
  explicit ModuleFiles(const Libdw& dw) : dw_(dw) {
    callbacks_.find_elf = FindNoElf;
    callbacks_.find_debuginfo = FindDebugFile;
    callbacks_.section_address = dw.offline_section_address;
    callbacks_.debuginfo_path = &debuginfo_path_;
  }
  ModuleFiles(const ModuleFiles&) = delete;
  ModuleFiles& operator=(const ModuleFiles&) = delete;
  ~ModuleFiles() {
    for (auto& [key, e] : entries_) {
      if (e.open.dwfl != nullptr) dw_.end(e.open.dwfl);
    }
  }

  enum class Outcome { kRead, kMissing, kRebuilt, kRefused };
  struct Entry {
    Outcome outcome = Outcome::kMissing;
    OpenModule open;  // with kRead
    std::string why;  // with kRefused
  };
  // The module `path` if its file is the build `build_id` names, read once per path and id; `first`
  // is set on the call that read it.
  const Entry& Get(const std::string& path, const std::string& build_id, bool& first) {
    auto [it, added] = entries_.try_emplace(std::make_pair(path, build_id));
    first = added;
    if (added) it->second.outcome = Open(path, build_id, it->second);
    return it->second;
  }

 private:
  Outcome Open(const std::string& path, const std::string& build_id, Entry& entry) {
    // The path comes from the trace: module_file.h opens it, with its checks, and libdw gets the
    // descriptor.
    absl::StatusOr<int> fd = OpenModuleFile(path);
    if (!fd.ok()) {
      if (absl::IsNotFound(fd.status())) return Outcome::kMissing;
      entry.why = std::string(fd.status().message());
      return Outcome::kRefused;
    }
    OpenModule& m = entry.open;
    m.dwfl = dw_.begin(&callbacks_);
    if (m.dwfl == nullptr) {
      ::close(*fd);
      return Outcome::kMissing;
    }
    dw_.report_begin(m.dwfl);
    m.module = dw_.report_elf(m.dwfl, path.c_str(), path.c_str(), *fd, 0, false);  // takes the descriptor
    if (m.module == nullptr) ::close(*fd);
    dw_.report_end(m.dwfl, nullptr, nullptr);
    const unsigned char* bits = nullptr;
    GElf_Addr note_address = 0;
    const int size = m.module == nullptr ? -1 : dw_.module_build_id(m.module, &bits, &note_address);
    Outcome outcome = Outcome::kRead;
    if (m.module == nullptr) {
      outcome = Outcome::kMissing;
    } else if (size <= 0 || std::string(reinterpret_cast<const char*>(bits), static_cast<size_t>(size)) != build_id) {
      outcome = Outcome::kRebuilt;
    }
    if (outcome != Outcome::kRead) {
      dw_.end(m.dwfl);
      m = OpenModule{};
      return outcome;
    }
    dw_.module_info(m.module, nullptr, &m.first_address, nullptr, nullptr, nullptr, nullptr, nullptr);
    return outcome;
  }

  const Libdw& dw_;
  char* debuginfo_path_ = nullptr;  // unused: FindDebugFile searches DebugDirectories()
  Dwfl_Callbacks callbacks_{};
  std::map<std::pair<std::string, std::string>, Entry> entries_;  // a map: entries stay where they are
};

// Whether an inlined function is launch code nvcc writes (core::IsLaunchGlueFunction) or the
// runtime's inline launch helpers (__cudaLaunchKernel_helper).
bool IsInlinedLaunchCode(const Libdw& dw, Dwarf_Die* scope, const core::KernelNameSet& kernels) {
  for (int name_attribute : {DW_AT_linkage_name, DW_AT_name}) {
    Dwarf_Attribute attribute;
    if (dw.attr_integrate(scope, name_attribute, &attribute) == nullptr) continue;
    const char* name = dw.formstring(&attribute);
    if (name == nullptr) continue;
    const std::string_view n = name;
    if (core::IsLaunchGlueFunction(n, kernels) || n.starts_with("__cuda")) return true;
  }
  return false;
}

// For an address inside launch code nvcc inlined into the function that wrote `<<<...>>>`: the
// file and line of that launch (the call site of the outermost inlined launch code), which the
// line table alone does not give (it names the wrapper's line, the kernel's definition).
std::optional<std::pair<std::string, int>> LaunchCallSite(const Libdw& dw, const OpenModule& module,
                                                          Dwarf_Addr address, const core::KernelNameSet& kernels) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = UnitAt(dw, module, address, &bias);
  if (unit == nullptr) return std::nullopt;
  Dwarf_Die* scopes = nullptr;
  const int count = dw.getscopes(unit, address - bias, &scopes);
  std::optional<std::pair<std::string, int>> site;
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  // Innermost first: while the scope is inlined launch code, its call site is where it was asked for.
  for (int i = 0; i < count && dw.tag(&scopes[i]) == DW_TAG_inlined_subroutine; ++i) {
    if (!IsInlinedLaunchCode(dw, &scopes[i], kernels)) break;
    Dwarf_Attribute file_attribute, line_attribute;
    Dwarf_Word file_index = 0, line = 0;
    if (dw.attr(&scopes[i], DW_AT_call_file, &file_attribute) == nullptr ||
        dw.attr(&scopes[i], DW_AT_call_line, &line_attribute) == nullptr ||
        dw.formudata(&file_attribute, &file_index) != 0 || dw.formudata(&line_attribute, &line) != 0 || line == 0) {
      break;
    }
    if (files == nullptr && dw.getsrcfiles(unit, &files, &file_count) != 0) break;
    if (file_index >= file_count) break;
    const char* file = dw.filesrc(files, file_index, nullptr, nullptr);
    if (file == nullptr || *file == '\0' || line > INT32_MAX) break;
    site.emplace(file, static_cast<int>(line));
  }
  std::free(scopes);
  return site;
}

}  // namespace

SourceLineSummary AddNativeSourceLines(core::Dictionary& dict,
                                       const std::function<bool(std::string_view module)>& skip) {
  return AddNativeSourceLines(dict, skip, LoadLibdw());
}

SourceLineSummary AddNativeSourceLines(core::Dictionary& dict, const std::function<bool(std::string_view module)>& skip,
                                       const Libdw& dw) {
  SourceLineSummary summary;
  std::vector<uint32_t> frames;
  for (uint32_t id = 1; id <= dict.frame_count(); ++id) {
    const v1::StackFrame& f = dict.frame(id);
    if (f.source_file() != 0 || f.module_build_id().empty()) continue;  // a Python frame, or nothing to check against
    const std::string& module = dict.str(f.module());
    if (module.empty() || module.front() != '/' || skip(module)) continue;
    frames.push_back(id);
  }
  summary.frames_with_build_id = frames.size();
  if (frames.empty()) return summary;
  if (!dw.loaded()) {
    summary.libdw_missing = true;
    return summary;
  }
  ModuleFiles files(dw);
  const core::KernelNameSet kernels = core::KernelNames(dict);
  absl::flat_hash_map<std::string, uint32_t> string_ids;  // the strings added, once each
  const auto intern = [&](const char* s) {
    auto [it, added] = string_ids.try_emplace(s, 0);
    if (added) it->second = dict.AddString(s);
    return it->second;
  };
  for (uint32_t id : frames) {
    const v1::StackFrame& f = dict.frame(id);
    const std::string& module = dict.str(f.module());
    bool first = false;
    const ModuleFiles::Entry& entry = files.Get(module, f.module_build_id(), first);
    if (first) {
      if (entry.outcome == ModuleFiles::Outcome::kRead) ++summary.modules_read;
      if (entry.outcome == ModuleFiles::Outcome::kRebuilt) summary.modules_rebuilt.push_back(module);
      if (entry.outcome == ModuleFiles::Outcome::kMissing) summary.modules_missing.push_back(module);
      if (entry.outcome == ModuleFiles::Outcome::kRefused) summary.modules_refused.push_back(entry.why);
    }
    if (entry.outcome != ModuleFiles::Outcome::kRead) continue;
    const Dwarf_Addr address = entry.open.first_address + f.module_offset();
    Dwfl_Line* line = dw.module_getsrc(entry.open.module, address);
    int number = 0;
    const char* file = line == nullptr ? nullptr : dw.lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
    if (line == nullptr) file = LineFromUnit(dw, entry.open, address, &number);
    if (file == nullptr || *file == '\0' || number <= 0) continue;
    const std::optional<std::pair<std::string, int>> launch = LaunchCallSite(dw, entry.open, address, kernels);
    if (launch.has_value()) {
      file = launch->first.c_str();
      number = launch->second;
    }
    const char* function = f.function() == 0 ? dw.module_addrname(entry.open.module, address) : nullptr;
    dict.SetNativeFrameSource(id, intern(file), static_cast<uint32_t>(number),
                              function != nullptr && *function != '\0' ? intern(function) : 0);
    ++summary.frames_resolved;
  }
  return summary;
}

std::vector<std::string> SourceLineNotes(const SourceLineSummary& summary) {
  std::vector<std::string> notes;
  const auto listed = [](const std::vector<std::string>& modules) {
    constexpr size_t kShown = 3;
    std::vector<std::string> shown(modules.begin(), modules.begin() + std::min(modules.size(), kShown));
    std::string text = absl::StrJoin(shown, ", ");
    if (modules.size() > kShown) absl::StrAppend(&text, " and ", modules.size() - kShown, " more");
    return text;
  };
  if (summary.libdw_missing) {
    notes.push_back(
        "cuscope: source lines of native frames need elfutils' libdw.so.1 (Debian and Ubuntu: libdw1); launch "
        "sites keep module+offset");
  }
  if (!summary.modules_rebuilt.empty()) {
    notes.push_back(absl::StrCat("cuscope: ", summary.modules_rebuilt.size(),
                                 " module(s) here are another build than the one that ran (their build id differs); "
                                 "their frames keep module+offset: ",
                                 listed(summary.modules_rebuilt)));
  }
  if (!summary.modules_missing.empty()) {
    notes.push_back(absl::StrCat("cuscope: ", summary.modules_missing.size(),
                                 " module(s) of the launch stacks are not on this machine; their frames keep "
                                 "module+offset: ",
                                 listed(summary.modules_missing)));
  }
  if (!summary.modules_refused.empty()) {
    notes.push_back(absl::StrCat("cuscope: ", summary.modules_refused.size(),
                                 " file(s) the launch stacks name were not read: ", listed(summary.modules_refused)));
  }
  return notes;
}

}  // namespace cuscope::symbolize
