#include "lib/core/trace_writer.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/core/trace_format.h"

namespace cuscope::core {

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path, bool overwrite) {
  // O_NONBLOCK and no O_TRUNC: this runs inside the profiled program, so a FIFO or a device at the
  // path must neither block it nor be written; only a regular file is truncated and kept.
  int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  if (!overwrite) flags |= O_EXCL;
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrCat("output file ", path, " already exists (use --force-overwrite to replace it)"));
    }
    if (err == ELOOP) {
      return absl::PermissionDeniedError(absl::StrCat("output path ", path, " is a symbolic link; refusing to follow it"));
    }
    if (err == ENXIO) {  // a FIFO nobody reads
      return absl::PermissionDeniedError(absl::StrCat("output path ", path, " is not a regular file"));
    }
    return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrCat("output path ", path, " is not a regular file"));
  }
  // The file is truncated and written in place (a trace is read while it grows, and survives a
  // crash under its own name): a file with another name linked to it would be overwritten too.
  if (st.st_nlink > 1) {
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrCat("output path ", path, " has ", st.st_nlink,
                                                    " hard links; refusing to write through them (remove it first)"));
  }
  if (::ftruncate(fd, 0) != 0 || ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("cannot create ", path, ": ", std::strerror(err)));
  }
  return std::unique_ptr<TraceWriter>(new TraceWriter(fd, path));
}

TraceWriter::~TraceWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status TraceWriter::WriteAll(const std::string& bytes) {
  if (fd_ < 0) return absl::FailedPreconditionError("trace writer is closed");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  bytes_written_ += done;
  return absl::OkStatus();
}

absl::Status TraceWriter::WriteHeader(const v1::Header& header) {
  scratch_.assign(kTraceMagic);
  block_.Clear();
  *block_.mutable_header() = header;
  block_.mutable_header()->set_format_version(kFormatVersion);
  AppendFramedBlock(block_, &scratch_);
  block_.Clear();
  return WriteAll(scratch_);
}

absl::Status TraceWriter::WriteChunk(const v1::Chunk& chunk) {
  scratch_.clear();
  // The block borrows the chunk for serialization only; release it again before returning.
  block_.Clear();
  block_.unsafe_arena_set_allocated_chunk(const_cast<v1::Chunk*>(&chunk));
  AppendFramedBlock(block_, &scratch_);
  block_.unsafe_arena_release_chunk();
  return WriteAll(scratch_);
}

absl::Status TraceWriter::Close() {
  if (fd_ < 0) return absl::OkStatus();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return absl::UnavailableError(absl::StrCat("cannot close ", path_, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

}  // namespace cuscope::core
