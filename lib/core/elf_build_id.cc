#include "lib/core/elf_build_id.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace cuscope::core {
namespace {

constexpr uint64_t kMaxHeaderOffset = 4096;  // program headers beyond the first page: not a normal image
constexpr uint16_t kMaxProgramHeaders = 128;
constexpr uint64_t kMaxNotes = 64 * 1024;    // bytes of one note segment
constexpr uint32_t kMaxBuildId = 64;         // SHA-1 ids are 20 bytes, MD5 16, UUIDs 16

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

}  // namespace

std::string BuildIdOfMappedImage(const void* base) {
  if (base == nullptr) return {};
  const auto* image = static_cast<const char*>(base);
  Elf64_Ehdr header;
  std::memcpy(&header, image, sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 || header.e_phnum > kMaxProgramHeaders ||
      header.e_phoff < sizeof(header) || header.e_phoff > kMaxHeaderOffset) {
    return {};
  }
  const auto program_header = [&](uint16_t i) {
    Elf64_Phdr p;
    std::memcpy(&p, image + header.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr), sizeof(p));
    return p;
  };
  // The image's first address: the loaded segment that starts at the file's start (the header).
  // Segments are mapped at base + (their address - that one).
  bool found_first = false;
  uint64_t first_address = 0;
  for (uint16_t i = 0; i < header.e_phnum && !found_first; ++i) {
    const Elf64_Phdr p = program_header(i);
    if (p.p_type == PT_LOAD && p.p_offset == 0) {
      first_address = p.p_vaddr;
      found_first = true;
    }
  }
  if (!found_first) return {};
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    const Elf64_Phdr p = program_header(i);
    if (p.p_type != PT_NOTE || p.p_vaddr < first_address || p.p_filesz > kMaxNotes) continue;
    std::string id = FindBuildIdNote(image + (p.p_vaddr - first_address), p.p_filesz);
    if (!id.empty()) return id;
  }
  return {};
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

}  // namespace cuscope::core
