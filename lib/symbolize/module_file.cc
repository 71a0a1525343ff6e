#include "lib/symbolize/module_file.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuscope::symbolize {
namespace {

absl::Status Refused(const std::string& path, absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat(path, ": ", why));
}

bool ReadAt(int fd, void* out, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, static_cast<char*>(out) + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Whether `count` entries of `entry_size` bytes from `offset` lie inside a file of `size` bytes.
bool TableInside(uint64_t offset, uint64_t count, uint64_t entry_size, uint64_t size) {
  if (count == 0) return true;
  if (offset > size) return false;
  return entry_size != 0 && count <= (size - offset) / entry_size;
}

// The header fields the checks read, from either ELF class.
struct ElfShape {
  uint64_t section_offset = 0;
  uint64_t section_count = 0;
  uint64_t section_entry_size = 0;
  uint64_t expected_section_entry_size = 0;
  uint64_t program_offset = 0;
  uint64_t program_count = 0;
  uint64_t program_entry_size = 0;
  uint64_t expected_program_entry_size = 0;
  uint64_t string_section = 0;
};

template <typename Ehdr, typename Shdr, typename Phdr>
bool ReadShape(int fd, ElfShape& shape) {
  Ehdr h;
  if (!ReadAt(fd, &h, sizeof(h), 0)) return false;
  shape.section_offset = h.e_shoff;
  shape.section_count = h.e_shnum;
  shape.section_entry_size = h.e_shentsize;
  shape.expected_section_entry_size = sizeof(Shdr);
  shape.program_offset = h.e_phoff;
  shape.program_count = h.e_phnum;
  shape.program_entry_size = h.e_phentsize;
  shape.expected_program_entry_size = sizeof(Phdr);
  shape.string_section = h.e_shstrndx;
  return true;
}

// Opens `path` itself (a link in its last component is not followed) and checks the file.
absl::StatusOr<int> OpenChecked(const std::string& path, bool& is_link) {
  is_link = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) {
      is_link = true;
      return -1;
    }
    if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(err)));
  }
  struct stat st {};
  absl::Status why;
  if (::fstat(fd, &st) != 0) {
    why = Refused(path, std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    why = Refused(path, "not a regular file");
  } else if (static_cast<uint64_t>(st.st_size) > kMaxModuleBytes) {
    why = Refused(path, absl::StrFormat("%.1f GiB, more than the %llu GiB a module may have", st.st_size / 1073741824.0,
                                        static_cast<unsigned long long>(kMaxModuleBytes >> 30)));
  } else {
    why = CheckElfShape(fd, static_cast<uint64_t>(st.st_size));
    if (!why.ok()) why = Refused(path, why.message());
  }
  if (!why.ok()) {
    ::close(fd);
    return why;
  }
  return fd;
}

std::string RealPath(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return "";
  std::string out = resolved;
  std::free(resolved);
  return out;
}

}  // namespace

const std::vector<std::string>& DebugDirectories() {
  static const std::vector<std::string> directories = {"/usr/lib/debug"};
  return directories;
}

absl::Status CheckElfShape(int fd, uint64_t size) {
  unsigned char ident[EI_NIDENT];
  if (size < EI_NIDENT || !ReadAt(fd, ident, sizeof(ident), 0) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return absl::FailedPreconditionError("not an ELF file");
  }
  constexpr unsigned char kHostData = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  if (ident[EI_DATA] != kHostData) return absl::FailedPreconditionError("an ELF file of another byte order");
  // A CUDA program is 64-bit, and so is every module it loads.
  if (ident[EI_CLASS] != ELFCLASS64) return absl::FailedPreconditionError("an ELF file of another class than 64-bit");
  ElfShape shape;
  const bool read = size >= sizeof(Elf64_Ehdr) && ReadShape<Elf64_Ehdr, Elf64_Shdr, Elf64_Phdr>(fd, shape);
  if (!read) return absl::FailedPreconditionError("its ELF header is cut");
  // Extended numbering: the real counts would be in the first section header, up to 2^32.
  if ((shape.section_count == 0 && shape.section_offset != 0) || shape.string_section == SHN_XINDEX ||
      shape.program_count == PN_XNUM) {
    return absl::FailedPreconditionError("its ELF header uses extended section numbering");
  }
  if (shape.section_count >= kMaxSections) {
    return absl::FailedPreconditionError(absl::StrCat(shape.section_count, " sections, more than ", kMaxSections));
  }
  if (shape.section_count != 0 && shape.section_entry_size != shape.expected_section_entry_size) {
    return absl::FailedPreconditionError("its section headers have the wrong size");
  }
  if (shape.program_count != 0 && shape.program_entry_size != shape.expected_program_entry_size) {
    return absl::FailedPreconditionError("its program headers have the wrong size");
  }
  if (!TableInside(shape.section_offset, shape.section_count, shape.section_entry_size, size) ||
      !TableInside(shape.program_offset, shape.program_count, shape.program_entry_size, size)) {
    return absl::FailedPreconditionError("its header tables lie past the end of the file");
  }
  return absl::OkStatus();
}

absl::StatusOr<int> OpenModuleFile(const std::string& path) {
  bool is_link = false;
  absl::StatusOr<int> fd = OpenChecked(path, is_link);
  if (!is_link) return fd;
  const std::string resolved = RealPath(path);
  if (resolved.empty()) return absl::NotFoundError(absl::StrCat(path, ": a link to nothing"));
  fd = OpenChecked(resolved, is_link);
  if (is_link) return Refused(path, "a link whose target changed while it was read");
  return fd;
}

std::string BuildIdDebugPath(std::string_view directory, std::string_view build_id) {
  std::string out = absl::StrCat(absl::string_view(directory.data(), directory.size()), "/.build-id/");
  for (size_t i = 0; i < build_id.size(); ++i) {
    absl::StrAppendFormat(&out, "%02x", static_cast<unsigned char>(build_id[i]));
    if (i == 0) out.push_back('/');
  }
  out.append(".debug");
  return out;
}

bool InsideDirectories(const std::string& path, const std::vector<std::string>& directories) {
  const std::string resolved = RealPath(path);
  if (resolved.empty()) return false;
  for (const std::string& directory : directories) {
    const std::string root = RealPath(directory);
    if (!root.empty() && resolved.size() > root.size() + 1 && resolved.compare(0, root.size(), root) == 0 &&
        resolved[root.size()] == '/') {
      return true;
    }
  }
  return false;
}

absl::StatusOr<int> OpenDebugFileForBuildId(std::string_view build_id, const std::vector<std::string>& directories) {
  if (build_id.size() < 2) return absl::NotFoundError("no build id");
  for (const std::string& directory : directories) {
    const std::string candidate = BuildIdDebugPath(directory, build_id);
    bool is_link = false;
    absl::StatusOr<int> fd = OpenChecked(candidate, is_link);
    if (is_link) {
      // Resolved once: the path checked is the path opened.
      const std::string target = RealPath(candidate);
      if (target.empty() || !InsideDirectories(target, {directory})) continue;
      fd = OpenChecked(target, is_link);
      if (is_link) continue;
    }
    if (fd.ok() || !absl::IsNotFound(fd.status())) return fd;
  }
  return absl::NotFoundError("no debug file for this build id");
}

}  // namespace cuscope::symbolize
