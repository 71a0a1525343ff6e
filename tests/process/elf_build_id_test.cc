// The build id of loaded ELF objects: this test's own executable and the C library as the dynamic
// linker loaded them (against `readelf -n` of their files), and fabricated note segments, whole and
// damaged.
#include "lib/process/elf_build_id.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <elf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/process/call_stack.h"

namespace cuscope::process {
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

TEST(ElfBuildIdTest, ThisExecutableAndTheCLibraryAsLoaded) {
  const std::string own = BuildIdOfLoadedObjectAt(reinterpret_cast<uintptr_t>(&AFunctionOfThisExecutable));
  ASSERT_FALSE(own.empty()) << "Debian's toolchain links with --build-id";
  EXPECT_EQ(own.size(), 20u) << "a SHA-1 id";
  char exe[4096] = {};
  ASSERT_GT(::readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);  // the shell readelf runs in is another process
  const std::string from_file = ReadelfBuildId(exe);
  if (!from_file.empty()) {
    EXPECT_EQ(BuildIdHex(own), from_file);
  }
  // A function of the C library no sanitizer intercepts: clang links AddressSanitizer's
  // interceptors (fopen's among them) into the executable itself.
  Dl_info libc{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(&::gnu_get_libc_version), &libc), 0);
  const std::string c_library = BuildIdOfLoadedObjectAt(reinterpret_cast<uintptr_t>(&::gnu_get_libc_version));
  ASSERT_FALSE(c_library.empty());
  EXPECT_NE(c_library, own);
  const std::string libc_file = ReadelfBuildId(libc.dli_fname);
  if (!libc_file.empty()) {
    EXPECT_EQ(BuildIdHex(c_library), libc_file);
  }
}

TEST(ElfBuildIdTest, AnAddressNoObjectHoldsHasNone) {
  const std::vector<char> heap(64);
  EXPECT_EQ(BuildIdOfLoadedObjectAt(reinterpret_cast<uintptr_t>(heap.data())), "");
  EXPECT_EQ(BuildIdOfLoadedObjectAt(0), "");
}

TEST(ElfBuildIdTest, ResolvedFramesCarryTheirModulesBuildId) {
  const auto address = reinterpret_cast<uintptr_t>(&AFunctionOfThisExecutable);
  const ResolvedFrame frame = ResolveReturnAddress(address + 1);
  EXPECT_FALSE(frame.build_id.empty());
  EXPECT_EQ(frame.build_id, BuildIdOfLoadedObjectAt(address));
  EXPECT_EQ(ResolveReturnAddress(address + 2).build_id, frame.build_id) << "the second, from the module's cache";
}

// A loaded object's note segments, fabricated: the notes in a buffer, program headers whose
// addresses count from it (the load bias is the buffer's address).
class FabricatedNotes {
 public:
  // A note: header, name (NUL included, padded to 4), descriptor (padded to 4).
  void AddNote(uint32_t type, const std::string& name, const std::string& desc) {
    Elf64_Nhdr n{static_cast<Elf64_Word>(name.size() + 1), static_cast<Elf64_Word>(desc.size()), type};
    std::string bytes(reinterpret_cast<const char*>(&n), sizeof(n));
    bytes += name;
    bytes.push_back('\0');
    while (bytes.size() % 4) bytes.push_back('\0');
    bytes += desc;
    while (bytes.size() % 4) bytes.push_back('\0');
    notes += bytes;
  }
  // A loaded segment first (holding nothing), then the notes' segment at 0x100.
  std::string Read() {
    buffer_.assign(0x100 + notes.size(), 0);
    std::memcpy(buffer_.data() + 0x100, notes.data(), notes.size());
    headers[0].p_type = PT_LOAD;
    headers[1].p_type = PT_NOTE;
    headers[1].p_vaddr = 0x100;
    headers[1].p_filesz = filesz.value_or(notes.size());
    headers[1].p_memsz = notes.size();
    return BuildIdFromNotes(headers, 2, reinterpret_cast<uintptr_t>(buffer_.data()));
  }
  std::string notes;
  std::optional<uint64_t> filesz;
  Elf64_Phdr headers[2] = {};

 private:
  std::vector<char> buffer_;
};

const std::string kId = std::string("\x01\x23\x45\x67\x89\xab\xcd\xef\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb", 20);

TEST(ElfBuildIdTest, TheGnuNoteAmongOthers) {
  FabricatedNotes n;
  n.AddNote(1, "XYZ", "abcd");
  n.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
  EXPECT_EQ(BuildIdHex(n.Read()), "0123456789abcdef00112233445566778899aabb");
}

TEST(ElfBuildIdTest, NoIdWhereNoneIsOrTheNotesAreDamaged) {
  EXPECT_EQ(BuildIdFromNotes(nullptr, 2, 0), "");
  {
    FabricatedNotes n;
    n.AddNote(1, "XYZ", "abcd");
    n.AddNote(NT_GNU_BUILD_ID, "LLVM", kId);  // another vendor's note of that type
    EXPECT_EQ(n.Read(), "");
  }
  {
    FabricatedNotes n;
    n.AddNote(NT_GNU_BUILD_ID, "GNU", std::string(65, 'x'));
    EXPECT_EQ(n.Read(), "") << "longer than any build id";
  }
  {
    FabricatedNotes n;
    n.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    n.notes[4] = '\x7f';  // n_descsz far past the segment
    EXPECT_EQ(n.Read(), "");
  }
  {
    FabricatedNotes n;
    n.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    n.filesz = 8;  // the segment ends inside the note
    EXPECT_EQ(n.Read(), "");
  }
  {
    FabricatedNotes n;
    n.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    n.filesz = 1 << 20;  // more in the file than mapped
    EXPECT_EQ(n.Read(), "");
  }
  {
    FabricatedNotes n;
    n.AddNote(NT_GNU_BUILD_ID, "GNU", kId);
    n.Read();
    EXPECT_EQ(BuildIdFromNotes(n.headers, 100000, 0), "") << "an implausible header count";
  }
}

TEST(ElfBuildIdTest, HexIsLowercasePairs) {
  EXPECT_EQ(BuildIdHex(std::string("\x00\x0f\xf0\xff", 4)), "000ff0ff");
  EXPECT_EQ(BuildIdHex(""), "");
}

}  // namespace
}  // namespace cuscope::process
