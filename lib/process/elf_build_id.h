// The GNU build id of a loaded ELF object: what names one build of an executable or shared object,
// so that a frame's module offset is read against the very file it was taken from, not a rebuilt one.
#ifndef CUSCOPE_LIB_PROCESS_ELF_BUILD_ID_H_
#define CUSCOPE_LIB_PROCESS_ELF_BUILD_ID_H_

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuscope::process {

// The build id (the NT_GNU_BUILD_ID note's bytes) among the note segments of a loaded object, given
// its program headers as mapped and its load bias (segment p at load_bias + p.p_vaddr); empty when
// it has none. Every size is bounded before it is used.
std::string BuildIdFromNotes(const Elf64_Phdr* headers, size_t count, uintptr_t load_bias);

// The build id of the loaded object that holds `address`, read inside dl_iterate_phdr, whose lock
// keeps the object mapped while it is read (another thread's dlclose waits); empty when no object
// holds the address or it has no build id. Walks the loaded objects: call it off the hot path.
std::string BuildIdOfLoadedObjectAt(uintptr_t address);

// As lowercase hex, the way `readelf -n` and `file` print it.
std::string BuildIdHex(const std::string& build_id);

}  // namespace cuscope::process

#endif  // CUSCOPE_LIB_PROCESS_ELF_BUILD_ID_H_
