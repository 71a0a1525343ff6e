// Small file-system helpers for tests of what cuscope writes: a fresh folder, a file's bytes, what
// kind of entry a path is, and what a folder holds.
#ifndef CUSCOPE_TESTS_CORE_FILE_CHECKS_H_
#define CUSCOPE_TESTS_CORE_FILE_CHECKS_H_

#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cuscope::file_checks {

// A new empty folder under $TEST_TMPDIR (or /tmp) whose name starts with `prefix`.
inline std::string NewDir(const std::string& prefix) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string templ = absl::StrCat(base ? base : "/tmp", "/", prefix, "_XXXXXX");
  EXPECT_NE(::mkdtemp(templ.data()), nullptr);
  return templ;
}

inline std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Both look at the path itself, never through a link.
inline bool IsRegular(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

inline bool IsLink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// The names in `dir`, "." and ".." left out.
inline std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

}  // namespace cuscope::file_checks

#endif  // CUSCOPE_TESTS_CORE_FILE_CHECKS_H_
