// The checks every file a trace names passes before libdw reads it: a FIFO or a device is refused
// without blocking, a sparse file claiming millions of sections is refused from its header, a link
// is followed to a file that passes the same checks, and debug files are found only by build id
// under the debug directories.
#include "lib/symbolize/module_file.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cuscope::symbolize {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/module_file_" + std::to_string(::getpid()) + "_" + name;
}

std::string SelfPath() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

// An ELF header of this machine's class, with the given section table; the file is `size` bytes
// (sparse past the header).
std::string WriteElfHeader(const std::string& name, uint16_t section_count, uint64_t section_offset, uint64_t size,
                           uint64_t first_section_size = 0) {
  const std::string path = TempPath(name);
  ::unlink(path.c_str());
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = EM_X86_64;
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof(Elf64_Ehdr);
  h.e_shentsize = sizeof(Elf64_Shdr);
  h.e_shnum = section_count;
  h.e_shoff = section_offset;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, &h, sizeof(h)), static_cast<ssize_t>(sizeof(h)));
  if (section_offset != 0 && first_section_size != 0) {
    Elf64_Shdr first{};
    first.sh_size = first_section_size;  // extended numbering: the real section count
    EXPECT_EQ(::pwrite(fd, &first, sizeof(first), static_cast<off_t>(section_offset)),
              static_cast<ssize_t>(sizeof(first)));
  }
  EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
  ::close(fd);
  return path;
}

TEST(ModuleFileTest, ThisExecutableIsOpened) {
  absl::StatusOr<int> fd = OpenModuleFile(SelfPath());
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_GE(*fd, 0);
  ::close(*fd);
}

TEST(ModuleFileTest, AMissingFileIsNotFound) {
  absl::StatusOr<int> fd = OpenModuleFile("/nonexistent/libmodel.so");
  EXPECT_TRUE(absl::IsNotFound(fd.status())) << fd.status();
}

// O_NONBLOCK: opening a FIFO nobody writes would otherwise block the reader for good.
TEST(ModuleFileTest, AFifoOrADeviceIsRefusedWithoutBlocking) {
  const std::string fifo = TempPath("fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<int> fd = OpenModuleFile(fifo);
  EXPECT_TRUE(absl::IsFailedPrecondition(fd.status())) << fd.status();
  EXPECT_THAT(fd.status().message(), HasSubstr("not a regular file"));
  fd = OpenModuleFile("/dev/zero");
  EXPECT_THAT(fd.status().message(), HasSubstr("not a regular file"));
  ::unlink(fifo.c_str());
}

TEST(ModuleFileTest, ALinkIsFollowedToAFileThatPassesTheSameChecks) {
  const std::string link = TempPath("link_to_self");
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(SelfPath().c_str(), link.c_str()), 0);
  absl::StatusOr<int> fd = OpenModuleFile(link);
  ASSERT_TRUE(fd.ok()) << fd.status();
  ::close(*fd);

  const std::string fifo = TempPath("fifo_behind_link");
  const std::string link_to_fifo = TempPath("link_to_fifo");
  ::unlink(fifo.c_str());
  ::unlink(link_to_fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(fifo.c_str(), link_to_fifo.c_str()), 0);
  fd = OpenModuleFile(link_to_fifo);
  EXPECT_THAT(fd.status().message(), HasSubstr("not a regular file"));
  for (const std::string& p : {link, fifo, link_to_fifo}) ::unlink(p.c_str());
}

TEST(ModuleFileTest, AFileThatIsNoElfIsRefused) {
  const std::string path = TempPath("text");
  std::ofstream(path) << "not an ELF file, but long enough to hold a header of one: 0123456789abcdef\n";
  absl::StatusOr<int> fd = OpenModuleFile(path);
  EXPECT_THAT(fd.status().message(), HasSubstr("not an ELF file"));
  ::unlink(path.c_str());
}

// A CUDA program and its modules are 64-bit: a 32-bit ELF file is not one of them.
TEST(ModuleFileTest, AnElfFileOfAnotherClassIsRefused) {
  const std::string path = WriteElfHeader("elf32", 0, 0, 4096);
  const int fd = ::open(path.c_str(), O_WRONLY);
  const unsigned char elf32 = ELFCLASS32;
  ASSERT_EQ(::pwrite(fd, &elf32, 1, EI_CLASS), 1);
  ::close(fd);
  EXPECT_THAT(OpenModuleFile(path).status().message(), HasSubstr("an ELF file of another class than 64-bit"));
  // Negative control: the same file as 64-bit opens.
  const std::string good = WriteElfHeader("elf64", 0, 0, 4096);
  absl::StatusOr<int> opened = OpenModuleFile(good);
  ASSERT_TRUE(opened.ok()) << opened.status();
  ::close(*opened);
  ::unlink(path.c_str());
  ::unlink(good.c_str());
}

// The review's file: an ELF header and 20 million sections by extended numbering, in a sparse file
// (libelf took 4 GB for it). Refused from the header alone.
TEST(ModuleFileTest, ExtendedSectionNumberingIsRefused) {
  const uint64_t sections = 20'000'000;
  const std::string path =
      WriteElfHeader("twenty_million_sections", 0, 4096, 4096 + sections * sizeof(Elf64_Shdr), sections);
  absl::StatusOr<int> fd = OpenModuleFile(path);
  EXPECT_TRUE(absl::IsFailedPrecondition(fd.status())) << fd.status();
  EXPECT_THAT(fd.status().message(), HasSubstr("extended section numbering"));
  ::unlink(path.c_str());
}

TEST(ModuleFileTest, SectionCountAtTheLimit) {
  const uint64_t table = 4096;
  const std::string under = WriteElfHeader("sections_under", kMaxSections - 1, table,
                                           table + (kMaxSections - 1) * sizeof(Elf64_Shdr));
  absl::StatusOr<int> fd = OpenModuleFile(under);
  ASSERT_TRUE(fd.ok()) << fd.status();
  ::close(*fd);
  const std::string at = WriteElfHeader("sections_at", kMaxSections, table, table + kMaxSections * sizeof(Elf64_Shdr));
  fd = OpenModuleFile(at);
  EXPECT_THAT(fd.status().message(), HasSubstr("sections, more than"));
  ::unlink(under.c_str());
  ::unlink(at.c_str());
}

TEST(ModuleFileTest, ATableThatLiesPastTheEndIsRefused) {
  const std::string path = WriteElfHeader("table_past_end", 100, 4096, 4096 + 99 * sizeof(Elf64_Shdr));
  absl::StatusOr<int> fd = OpenModuleFile(path);
  EXPECT_THAT(fd.status().message(), HasSubstr("past the end of the file"));
  ::unlink(path.c_str());
}

TEST(ModuleFileTest, AFileLargerThanAnyModuleIsRefused) {
  const std::string path = WriteElfHeader("huge_sparse", 0, 0, kMaxModuleBytes + 1);
  absl::StatusOr<int> fd = OpenModuleFile(path);
  EXPECT_THAT(fd.status().message(), HasSubstr("GiB, more than"));
  ::unlink(path.c_str());
  const std::string at_limit = WriteElfHeader("at_the_limit", 0, 0, kMaxModuleBytes);
  fd = OpenModuleFile(at_limit);
  EXPECT_TRUE(fd.ok()) << fd.status();
  if (fd.ok()) ::close(*fd);
  ::unlink(at_limit.c_str());
}

TEST(ModuleFileTest, DebugFilesAreFoundByBuildIdInsideTheirDirectoryOnly) {
  const std::string root = TempPath("debug");
  const std::string build_id("\xab\xcd\x01\x02", 4);
  ASSERT_EQ(BuildIdDebugPath(root, build_id), root + "/.build-id/ab/cd0102.debug");
  ASSERT_EQ(::system(("rm -rf " + root + " && mkdir -p " + root + "/.build-id/ab " + root + "/usr/lib").c_str()), 0);
  EXPECT_TRUE(absl::IsNotFound(OpenDebugFileForBuildId(build_id, {root}).status()));

  // Fedora's layout: the build-id entry is a link to the file elsewhere under the same root.
  const std::string file = root + "/usr/lib/libmodel.so.debug";
  ASSERT_EQ(::system(("cp " + SelfPath() + " " + file).c_str()), 0);
  ASSERT_EQ(::symlink("../../usr/lib/libmodel.so.debug", BuildIdDebugPath(root, build_id).c_str()), 0);
  absl::StatusOr<int> fd = OpenDebugFileForBuildId(build_id, {root});
  ASSERT_TRUE(fd.ok()) << fd.status();
  ::close(*fd);

  // A link out of the debug directory is not followed.
  ::unlink(BuildIdDebugPath(root, build_id).c_str());
  ASSERT_EQ(::symlink(SelfPath().c_str(), BuildIdDebugPath(root, build_id).c_str()), 0);
  EXPECT_TRUE(absl::IsNotFound(OpenDebugFileForBuildId(build_id, {root}).status()));
  EXPECT_FALSE(InsideDirectories(BuildIdDebugPath(root, build_id), {root}));
  EXPECT_TRUE(InsideDirectories(file, {root}));
  EXPECT_FALSE(InsideDirectories(root, {root})) << "the directory itself is not inside it";
  EXPECT_EQ(::system(("rm -rf " + root).c_str()), 0);
}

}  // namespace
}  // namespace cuscope::symbolize
