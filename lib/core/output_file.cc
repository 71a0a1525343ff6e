#include "lib/core/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cuscope::core {
namespace {

constexpr int kCreateFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

absl::Status CannotWrite(const std::string& path, int err) {
  return absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
}

// A name no one else uses, in the directory of `path`: ".NAME.<12 random characters>.tmp". The base is
// shortened so that the name stays within NAME_MAX.
std::string TempCandidate(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.size() > 64) base.resize(64);
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t mix = (static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 30)) * 0x9e3779b97f4a7c15ull;
  mix ^= (static_cast<uint64_t>(::getpid()) << 40) + counter.fetch_add(1, std::memory_order_relaxed) * 0xbf58476d1ce4e5b9ull;
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string suffix;
  for (int i = 0; i < 12; ++i) {
    suffix.push_back(kChars[mix % 36]);
    mix /= 36;
    if (mix == 0) mix = 0x2545f4914f6cdd1dull + static_cast<uint64_t>(i);
  }
  return absl::StrCat(dir, ".", base, ".", suffix, ".tmp");
}

// The files being written, for RemovePartialOutputs: fixed slots of plain bytes, so that a signal
// handler can read them. A slot is claimed (kWriting), filled, then published (kReady); the
// handler removes only published ones.
constexpr int kSlots = 32;
constexpr int kFree = 0, kWriting = 1, kReady = 2;
struct PartialOutput {
  std::atomic<int> state{kFree};
  char path[4096];
};
PartialOutput g_partial_outputs[kSlots];

int RegisterPartialOutput(const std::string& path) {
  if (path.size() >= sizeof(PartialOutput::path)) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_partial_outputs[i].state.compare_exchange_strong(expected, kWriting)) continue;
    std::memcpy(g_partial_outputs[i].path, path.c_str(), path.size() + 1);
    g_partial_outputs[i].state.store(kReady);
    return i;
  }
  return -1;
}

void UnregisterPartialOutput(int slot) {
  if (slot >= 0) g_partial_outputs[slot].state.store(kFree);
}

void RemoveAndReraise(int signal) {
  RemovePartialOutputs();
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(signal, &action, nullptr);
  ::raise(signal);
}

}  // namespace

void RemovePartialOutputs() {
  for (PartialOutput& p : g_partial_outputs) {
    int expected = kReady;
    if (p.state.compare_exchange_strong(expected, kWriting)) ::unlink(p.path);  // and the slot stays taken
  }
}

void RemovePartialOutputsOnSignals() {
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action {};
    action.sa_handler = RemoveAndReraise;
    ::sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    ::sigaction(signal, &action, nullptr);
  }
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path, bool overwrite) {
  if (path.empty()) return absl::InvalidArgumentError("no output file name");
  if (path.back() == '/') return absl::InvalidArgumentError(absl::StrCat("output file ", path, " names a directory"));
  std::string temp;
  int fd = -1;
  if (!overwrite) {
    fd = ::open(path.c_str(), kCreateFlags, 0666);
    if (fd < 0) {
      const int err = errno;
      if (err == EEXIST) {
        return absl::AlreadyExistsError(
            absl::StrCat("output file ", path, " already exists (use -f/--force-overwrite to replace it)"));
      }
      return CannotWrite(path, err);
    }
  } else {
    // A new file beside the target, renamed over it by Close(): a symbolic link at the path is
    // replaced, not followed.
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      temp = TempCandidate(path);
      fd = ::open(temp.c_str(), kCreateFlags, 0666);
      if (fd < 0 && errno != EEXIST) return CannotWrite(path, errno);
    }
    if (fd < 0) return CannotWrite(path, EEXIST);
  }
  std::unique_ptr<OutputFile> out(new OutputFile(fd, path, std::move(temp)));
  out->buffer_.reserve(kFlushBytes + (kFlushBytes >> 2));
  out->registry_slot_ = RegisterPartialOutput(out->written_path());
  return out;
}

OutputFile::~OutputFile() {
  if (!finished_) Discard();
}

void OutputFile::SetByteLimit(uint64_t bytes, std::string what, std::string reason) {
  byte_limit_ = bytes;
  limit_what_ = std::move(what);
  limit_reason_ = std::move(reason);
}

void OutputFile::Flush() {
  if (status_.ok() && flushed_ + buffer_.size() > byte_limit_) {
    status_ = absl::ResourceExhaustedError(absl::StrCat(limit_what_, " stopped at ", byte_limit_,
                                                        " bytes, its bound: ", limit_reason_));
  }
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
  if (finished_) return status_;
  Flush();
  const int rc = ::close(fd_);
  const int close_err = errno;
  fd_ = -1;
  if (rc != 0 && status_.ok()) {
    status_ = absl::UnavailableError(absl::StrCat("cannot close ", path_, ": ", std::strerror(close_err)));
  }
  if (status_.ok() && !temp_path_.empty() && ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    status_ = absl::UnavailableError(absl::StrCat("cannot replace ", path_, ": ", std::strerror(errno)));
  }
  if (!status_.ok()) {
    Discard();
    return status_;
  }
  finished_ = true;
  UnregisterPartialOutput(registry_slot_);
  return status_;
}

void OutputFile::Discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  buffer_.clear();
  if (!finished_) ::unlink(written_path().c_str());
  finished_ = true;
  UnregisterPartialOutput(registry_slot_);
}

std::string TraceOutputBoundReason(uint64_t trace_bytes) {
  return absl::StrCat(kOutputBytesPerTraceByte, " times the trace's ", trace_bytes, " bytes plus ", kOutputFixedBytes,
                      " (the trace repeats long names or stacks far more than a real one does)");
}

absl::Status WriteOutputFile(const std::string& path, std::string_view contents, bool overwrite) {
  absl::StatusOr<std::unique_ptr<OutputFile>> file = OutputFile::Create(path, overwrite);
  if (!file.ok()) return file.status();
  (*file)->Append(contents);
  return (*file)->Close();
}

absl::StatusOr<std::string> ReadFileForRewrite(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return std::string();
    if (err == ELOOP) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " is a symbolic link; cuscope does not write through one (name the file itself)"));
    }
    return absl::PermissionDeniedError(absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file; cuscope only rewrites regular files"));
  }
  std::string contents;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    contents.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return contents;
}

absl::StatusOr<std::unique_ptr<ScratchFile>> ScratchFile::CreateBeside(const std::string& path, bool overwrite) {
  if (path.empty()) return absl::InvalidArgumentError("no output file name");
  if (path.back() == '/') return absl::InvalidArgumentError(absl::StrCat("output file ", path, " names a directory"));
  struct stat st;
  if (!overwrite && ::lstat(path.c_str(), &st) == 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("output file ", path, " already exists (use -f/--force-overwrite to replace it)"));
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string scratch = TempCandidate(path);
    const int fd = ::open(scratch.c_str(), kCreateFlags, 0666);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return CannotWrite(path, errno);
    ::close(fd);
    const int slot = RegisterPartialOutput(scratch);
    return std::unique_ptr<ScratchFile>(new ScratchFile(path, std::move(scratch), overwrite, slot));
  }
  return CannotWrite(path, EEXIST);
}

ScratchFile::~ScratchFile() {
  if (!published_) ::unlink(scratch_.c_str());
  UnregisterPartialOutput(registry_slot_);
}

absl::Status ScratchFile::Publish() {
  if (published_) return absl::OkStatus();
  if (overwrite_) {
    if (::rename(scratch_.c_str(), path_.c_str()) != 0) return CannotWrite(path_, errno);
  } else {
    int linked = ::link(scratch_.c_str(), path_.c_str());
    if (linked != 0 && (errno == EPERM || errno == EOPNOTSUPP || errno == ENOTSUP || errno == EMLINK)) {
      // A file system without hard links (vfat, exFAT, many network and FUSE mounts): a rename that
      // refuses an existing target does the same.
      linked = ::renameat2(AT_FDCWD, scratch_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    }
    if (linked != 0) {
      const int err = errno;
      if (err == EEXIST) {
        return absl::AlreadyExistsError(
            absl::StrCat("output file ", path_, " already exists (use -f/--force-overwrite to replace it)"));
      }
      return CannotWrite(path_, err);
    }
    ::unlink(scratch_.c_str());
  }
  published_ = true;
  return absl::OkStatus();
}

}  // namespace cuscope::core
