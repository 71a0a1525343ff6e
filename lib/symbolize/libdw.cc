#include "lib/symbolize/libdw.h"

#include <dlfcn.h>

namespace cuscope::symbolize {
namespace {

template <typename F>
bool Find(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(handle, name));
  return out != nullptr;
}

Libdw Load() {
  void* handle = ::dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return {};
  Libdw l;
  const bool all = Find(handle, "dwfl_begin", l.begin) && Find(handle, "dwfl_end", l.end) &&
                   Find(handle, "dwfl_report_begin", l.report_begin) && Find(handle, "dwfl_report_elf", l.report_elf) &&
                   Find(handle, "dwfl_report_end", l.report_end) &&
                   Find(handle, "dwfl_module_build_id", l.module_build_id) &&
                   Find(handle, "dwfl_module_info", l.module_info) &&
                   Find(handle, "dwfl_module_getsrc", l.module_getsrc) && Find(handle, "dwfl_lineinfo", l.lineinfo) &&
                   Find(handle, "dwfl_module_addrname", l.module_addrname) &&
                   Find(handle, "dwfl_offline_section_address", l.offline_section_address) &&
                   Find(handle, "dwfl_module_addrdie", l.module_addrdie) &&
                   Find(handle, "dwarf_getscopes", l.getscopes) && Find(handle, "dwarf_tag", l.tag) &&
                   Find(handle, "dwarf_attr", l.attr) && Find(handle, "dwarf_attr_integrate", l.attr_integrate) &&
                   Find(handle, "dwarf_formstring", l.formstring) && Find(handle, "dwarf_formudata", l.formudata) &&
                   Find(handle, "dwarf_getsrcfiles", l.getsrcfiles) && Find(handle, "dwarf_filesrc", l.filesrc) &&
                   Find(handle, "dwfl_module_nextcu", l.module_nextcu) && Find(handle, "dwarf_ranges", l.ranges) &&
                   Find(handle, "dwarf_getsrc_die", l.getsrc_die) && Find(handle, "dwarf_linesrc", l.linesrc) &&
                   Find(handle, "dwarf_lineno", l.lineno) && Find(handle, "dwfl_module_getelf", l.module_getelf) &&
                   Find(handle, "elf_getphdrnum", l.getphdrnum) && Find(handle, "gelf_getphdr", l.getphdr);
  if (!all) {
    ::dlclose(handle);
    return {};
  }
  return l;  // the handle stays open for the process's life
}

}  // namespace

const Libdw& LoadLibdw() {
  static const Libdw libdw = Load();
  return libdw;
}

}  // namespace cuscope::symbolize
