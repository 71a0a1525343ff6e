// elfutils' libdwfl, loaded at run time (dlopen of libdw.so.1): the CLI runs on machines without it
// (the GPU machine has no elfutils), where native frames keep their module and offset.
#ifndef CUSCOPE_LIB_SYMBOLIZE_LIBDW_H_
#define CUSCOPE_LIB_SYMBOLIZE_LIBDW_H_

#include <elfutils/libdwfl.h>

namespace cuscope::symbolize {

// The libdwfl and libdw functions the line lookup uses; null members when the library is missing.
struct Libdw {
  decltype(&::dwfl_begin) begin = nullptr;
  decltype(&::dwfl_end) end = nullptr;
  decltype(&::dwfl_report_begin) report_begin = nullptr;
  decltype(&::dwfl_report_elf) report_elf = nullptr;
  decltype(&::dwfl_report_end) report_end = nullptr;
  decltype(&::dwfl_module_build_id) module_build_id = nullptr;
  decltype(&::dwfl_module_info) module_info = nullptr;
  decltype(&::dwfl_module_getsrc) module_getsrc = nullptr;
  decltype(&::dwfl_lineinfo) lineinfo = nullptr;
  decltype(&::dwfl_module_addrname) module_addrname = nullptr;
  decltype(&::dwfl_offline_section_address) offline_section_address = nullptr;
  // The scopes around an address (inlined calls), for the launch code nvcc inlines.
  decltype(&::dwfl_module_addrdie) module_addrdie = nullptr;
  decltype(&::dwarf_getscopes) getscopes = nullptr;
  decltype(&::dwarf_tag) tag = nullptr;
  decltype(&::dwarf_attr) attr = nullptr;
  decltype(&::dwarf_attr_integrate) attr_integrate = nullptr;
  decltype(&::dwarf_formstring) formstring = nullptr;
  decltype(&::dwarf_formudata) formudata = nullptr;
  decltype(&::dwarf_getsrcfiles) getsrcfiles = nullptr;
  decltype(&::dwarf_filesrc) filesrc = nullptr;
  // A module's units and their ranges, and a unit's line table: for modules without .debug_aranges
  // (clang writes none by default), where libdwfl finds no unit for any address.
  decltype(&::dwfl_module_nextcu) module_nextcu = nullptr;
  decltype(&::dwarf_ranges) ranges = nullptr;
  decltype(&::dwarf_getsrc_die) getsrc_die = nullptr;
  decltype(&::dwarf_linesrc) linesrc = nullptr;
  decltype(&::dwarf_lineno) lineno = nullptr;
  // The module's program headers (libelf, which libdw loads), to keep only ranges in its code.
  decltype(&::dwfl_module_getelf) module_getelf = nullptr;
  decltype(&::elf_getphdrnum) getphdrnum = nullptr;
  decltype(&::gelf_getphdr) getphdr = nullptr;

  bool loaded() const { return begin != nullptr; }
};

// The library, loaded once (thread-safe); `loaded()` is false when libdw.so.1 or one of these
// functions is missing.
const Libdw& LoadLibdw();

}  // namespace cuscope::symbolize

#endif  // CUSCOPE_LIB_SYMBOLIZE_LIBDW_H_
