#include "lib/export/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace cuscope::exporter {

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path, bool overwrite) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
  flags |= overwrite ? O_TRUNC : O_EXCL;
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrCat("output file ", path, " already exists (use --force-overwrite to replace it)"));
    }
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
  }
  std::unique_ptr<OutputFile> out(new OutputFile(fd, path));
  out->buffer_.reserve(kFlushBytes + (kFlushBytes >> 2));
  return out;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::Flush() {
  if (!status_.ok() || fd_ < 0) {
    buffer_.clear();
    return;
  }
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      status_ = absl::UnavailableError(absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
      break;
    }
    done += static_cast<size_t>(n);
  }
  flushed_ += done;
  buffer_.clear();
}

absl::Status OutputFile::Close() {
  if (fd_ < 0) return status_;
  Flush();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0 && status_.ok()) {
    status_ = absl::UnavailableError(absl::StrCat("cannot close ", path_, ": ", std::strerror(errno)));
  }
  return status_;
}

void OutputFile::Discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  buffer_.clear();
  ::unlink(path_.c_str());
}

}  // namespace cuscope::exporter
