#include "lib/process/elf_build_id.h"

#include <link.h>

#include <cstring>

namespace cuscope::process {
namespace {

constexpr size_t kMaxProgramHeaders = 256;
constexpr uint64_t kMaxNotes = 64 * 1024;  // bytes of one note segment
constexpr uint32_t kMaxBuildId = 64;       // SHA-1 ids are 20 bytes, MD5 16, UUIDs 16

constexpr uint64_t AlignUp4(uint64_t n) { return (n + 3) & ~uint64_t{3}; }

// The build id among one note segment's notes (4-byte aligned name and descriptor after each header).
std::string FindBuildIdNote(const char* notes, uint64_t size) {
  uint64_t at = 0;
  while (at + sizeof(Elf64_Nhdr) <= size) {
    Elf64_Nhdr header;
    std::memcpy(&header, notes + at, sizeof(header));
    const uint64_t name_at = at + sizeof(header);
    const uint64_t desc_at = name_at + AlignUp4(header.n_namesz);
    const uint64_t next = desc_at + AlignUp4(header.n_descsz);
    if (header.n_namesz > size || header.n_descsz > size || next > size) return {};
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 && std::memcmp(notes + name_at, "GNU", 4) == 0 &&
        header.n_descsz > 0 && header.n_descsz <= kMaxBuildId) {
      return std::string(notes + desc_at, header.n_descsz);
    }
    at = next;
  }
  return {};
}

struct Search {
  uintptr_t address = 0;
  std::string build_id;
};

int VisitLoadedObject(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* search = static_cast<Search*>(data);
  if (info->dlpi_phdr == nullptr || info->dlpi_phnum > kMaxProgramHeaders) return 0;
  bool holds = false;
  for (size_t i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const Elf64_Phdr& p = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    holds = p.p_type == PT_LOAD && search->address >= start && search->address - start < p.p_memsz;
  }
  if (!holds) return 0;
  search->build_id = BuildIdFromNotes(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr);
  return 1;  // found: stop
}

}  // namespace

std::string BuildIdFromNotes(const Elf64_Phdr* headers, size_t count, uintptr_t load_bias) {
  if (headers == nullptr || count > kMaxProgramHeaders) return {};
  for (size_t i = 0; i < count; ++i) {
    const Elf64_Phdr& p = headers[i];
    if (p.p_type != PT_NOTE || p.p_filesz > kMaxNotes || p.p_filesz > p.p_memsz) continue;
    std::string id = FindBuildIdNote(reinterpret_cast<const char*>(load_bias + p.p_vaddr), p.p_filesz);
    if (!id.empty()) return id;
  }
  return {};
}

std::string BuildIdOfLoadedObjectAt(uintptr_t address) {
  Search search;
  search.address = address;
  ::dl_iterate_phdr(VisitLoadedObject, &search);
  return search.build_id;
}

std::string BuildIdHex(const std::string& build_id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(build_id.size() * 2);
  for (unsigned char c : build_id) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

}  // namespace cuscope::process
