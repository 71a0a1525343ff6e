// The build id of mapped ELF images: this test's own executable and the C library as the dynamic
// linker mapped them (against `readelf -n` of their files), and fabricated images, whole and damaged.
#include "lib/core/elf_build_id.h"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/call_stack.h"

namespace cuscope::core {
namespace {

// What readelf prints as the file's build id, or empty when readelf is missing.
std::string ReadelfBuildId(const std::string& path) {
  FILE* p = ::popen(("readelf -n " + path + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return {};
  std::string out;
  char line[512];
  while (std::fgets(line, sizeof(line), p) != nullptr) {
    const char* at = std::strstr(line, "Build ID: ");
    if (at != nullptr) {
      out = at + std::strlen("Build ID: ");
      while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    }
  }
  ::pclose(p);
  return out;
}

void AFunctionOfThisExecutable() {}

TEST(ElfBuildIdTest, ThisExecutableAndTheCLibraryAsMapped) {
  Dl_info self{}, libc{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(&AFunctionOfThisExecutable), &self), 0);
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(&std::fopen), &libc), 0);
  const std::string own = BuildIdOfMappedImage(self.dli_fbase);
  ASSERT_FALSE(own.empty()) << "Debian's toolchain links with --build-id";
  EXPECT_EQ(own.size(), 20u) << "a SHA-1 id";
  char exe[4096] = {};
  ASSERT_GT(::readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);  // the shell readelf runs in is another process
  const std::string from_file = ReadelfBuildId(exe);
  if (!from_file.empty()) {
    EXPECT_EQ(BuildIdHex(own), from_file);
  }
  const std::string c_library = BuildIdOfMappedImage(libc.dli_fbase);
  ASSERT_FALSE(c_library.empty());
  EXPECT_NE(c_library, own);
  const std::string libc_file = ReadelfBuildId(libc.dli_fname);
  if (!libc_file.empty()) {
    EXPECT_EQ(BuildIdHex(c_library), libc_file);
  }
}

TEST(ElfBuildIdTest, ResolvedFramesCarryTheirModulesBuildId) {
  const auto address = reinterpret_cast<uintptr_t>(&AFunctionOfThisExecutable) + 1;
  const ResolvedFrame frame = ResolveReturnAddress(address);
  Dl_info self{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(&AFunctionOfThisExecutable), &self), 0);
  EXPECT_EQ(frame.build_id, BuildIdOfMappedImage(self.dli_fbase));
  EXPECT_FALSE(frame.build_id.empty());
}

// A mapped image, fabricated: the header, two program headers (the first loaded segment at
// 0x400000 like a non-PIE executable, a note segment after them) and the notes.
class FabricatedImage {
 public:
  FabricatedImage() : bytes_(4096, 0) {
    Elf64_Ehdr h{};
    std::memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_phoff = sizeof(Elf64_Ehdr);
    h.e_phentsize = sizeof(Elf64_Phdr);
    h.e_phnum = 2;
    header_ = h;
    load_.p_type = PT_LOAD;
    load_.p_offset = 0;
    load_.p_vaddr = 0x400000;
    note_.p_type = PT_NOTE;
    note_.p_vaddr = 0x400000 + kNotesAt;
  }
  // A note: header, name (NUL included, padded to 4), descriptor (padded to 4).
  void AddNote(uint32_t type, const std::string& name, const std::string& desc) {
    Elf64_Nhdr n{static_cast<Elf64_Word>(name.size() + 1), static_cast<Elf64_Word>(desc.size()), type};
    std::string bytes(reinterpret_cast<const char*>(&n), sizeof(n));
    bytes += name;
    bytes.push_back('\0');
    while (bytes.size() % 4) bytes.push_back('\0');
    bytes += desc;
    while (bytes.size() % 4) bytes.push_back('\0');
    notes_ += bytes;
  }
  Elf64_Ehdr header_{};
  Elf64_Phdr load_{};
  Elf64_Phdr note_{};
  std::string notes_;

  const void* Map() {
    note_.p_filesz = notes_.size();
    std::memcpy(bytes_.data(), &header_, sizeof(header_));
    std::memcpy(bytes_.data() + sizeof(Elf64_Ehdr), &load_, sizeof(load_));
    std::memcpy(bytes_.data() + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), &note_, sizeof(note_));
    std::memcpy(bytes_.data() + kNotesAt, notes_.data(), notes_.size());
    return bytes_.data();
  }

 private:
  static constexpr size_t kNotesAt = 0x200;
  std::vector<char> bytes_;
};

const std::string kId = std::string("\x01\x23\x45\x67\x89\xab\xcd\xef\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb", 20);

TEST(ElfBuildIdTest, TheGnuNoteAmongOthers) {
  FabricatedImage image;
  image.AddNote(1, "XYZ", "abcd");
  image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
  EXPECT_EQ(BuildIdHex(BuildIdOfMappedImage(image.Map())), "0123456789abcdef00112233445566778899aabb");
}

TEST(ElfBuildIdTest, NoIdWhereNoneIsOrTheImageIsDamaged) {
  EXPECT_EQ(BuildIdOfMappedImage(nullptr), "");
  {
    FabricatedImage image;
    image.AddNote(1, "XYZ", "abcd");
    image.AddNote(NT_GNU_BUILD_ID, "LLVM", kId);  // another vendor's note of that type
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "");
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    image.header_.e_ident[EI_MAG1] = 'X';
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "") << "not ELF";
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    image.header_.e_ident[EI_CLASS] = ELFCLASS32;
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "") << "32-bit";
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    image.header_.e_phnum = 0;
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "");
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    image.header_.e_phoff = 1 << 20;
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "") << "program headers far outside the first page";
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    image.load_.p_offset = 0x1000;  // no loaded segment holds the header
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "");
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", std::string(65, 'x'));
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "") << "longer than any build id";
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    image.notes_[4] = '\x7f';  // n_descsz far past the segment
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "");
  }
  {
    FabricatedImage image;
    image.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    image.note_.p_vaddr = 0x1000;  // below the image's first address
    EXPECT_EQ(BuildIdOfMappedImage(image.Map()), "");
  }
}

TEST(ElfBuildIdTest, HexIsLowercasePairs) {
  EXPECT_EQ(BuildIdHex(std::string("\x00\x0f\xf0\xff", 4)), "000ff0ff");
  EXPECT_EQ(BuildIdHex(""), "");
}

}  // namespace
}  // namespace cuscope::core
