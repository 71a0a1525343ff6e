// Every file the `cuscope` command writes (an exported timeline, the HTML report, the tuning log) is
// created here, by one rule:
//
//   - without overwrite, the path itself is created with O_CREAT|O_EXCL|O_NOFOLLOW: anything
//     already there, a symbolic link included (dangling or not), is refused with one line that
//     names the path and -f/--force-overwrite;
//   - with overwrite, and for the rewrite that appends to the tuning log, the bytes go to a new
//     file in the same directory (O_CREAT|O_EXCL|O_NOFOLLOW, 0666 less the umask) that rename()
//     then puts in place of the path. A symbolic link at the path is replaced, never followed, so
//     its target is untouched; a reader sees the old file or the whole new one, never half.
//
// A failed write leaves nothing behind: the temporary file is removed (and, without overwrite, the
// file that was created). Writes go through a buffer the exporters append to directly: an event
// costs a few appends and a size check, and the file gets writes of about kFlushBytes. The first
// write error is kept and reported by status() and Close(); appends after it are dropped.
//
// Plain POSIX and abseil: cuscope_core is also linked into libcuscope.so.
#ifndef CUSCOPE_LIB_CORE_OUTPUT_FILE_H_
#define CUSCOPE_LIB_CORE_OUTPUT_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cuscope::core {

class OutputFile {
 public:
  static constexpr size_t kFlushBytes = 1 << 20;

  // Opens `path` for writing by the rule above; `overwrite` is -f/--force-overwrite.
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(const std::string& path, bool overwrite);
  // An OutputFile neither closed nor discarded is discarded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Writers append to this buffer and call MaybeFlush() after each event.
  std::string& buffer() { return buffer_; }
  void Append(std::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes || flushed_ + buffer_.size() > byte_limit_) Flush();
  }

  // Ends the output once more than `bytes` are handed to it: status() becomes ResourceExhausted,
  // saying `what` passed its bound and naming `reason` (what the bound is), and nothing more is written.
  // A writer that checks status() after each event stops within one event of the bound.
  void SetByteLimit(uint64_t bytes, std::string what, std::string reason);

  // Writes out the buffer, closes the file and (with overwrite) renames it into place; the first
  // error of any step. On an error nothing is left behind.
  absl::Status Close();
  // Closes and removes what was written: for an output that failed half way.
  void Discard();

  const absl::Status& status() const { return status_; }
  // Bytes handed to the file so far (buffered ones included).
  uint64_t bytes() const { return flushed_ + buffer_.size(); }
  // The path asked for (not the temporary file's).
  const std::string& path() const { return path_; }

 private:
  OutputFile(int fd, std::string path, std::string temp_path)
      : fd_(fd), path_(std::move(path)), temp_path_(std::move(temp_path)) {}
  void Flush();
  // The file written to: the temporary file when replacing, else the path.
  const std::string& written_path() const { return temp_path_.empty() ? path_ : temp_path_; }

  int fd_ = -1;
  int registry_slot_ = -1;  // where RemovePartialOutputs finds written_path(); -1: not registered
  bool finished_ = false;   // closed or discarded
  std::string path_;
  std::string temp_path_;  // empty without overwrite
  std::string buffer_;
  uint64_t flushed_ = 0;
  uint64_t byte_limit_ = UINT64_MAX;
  std::string limit_what_, limit_reason_;
  absl::Status status_;
};

// A file for a writer that must open its output by name itself (SQLite): a new empty file beside
// `path` (O_CREAT|O_EXCL|O_NOFOLLOW), removed when the ScratchFile goes or by RemovePartialOutputs,
// unless Publish put it at `path` by the rule above: without overwrite with link(), which refuses
// anything already at the path, a symbolic link included; with overwrite with rename().
class ScratchFile {
 public:
  // Fails at once, naming -f, when the path is taken and `overwrite` is false: before the work.
  static absl::StatusOr<std::unique_ptr<ScratchFile>> CreateBeside(const std::string& path, bool overwrite);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // The scratch file's own name, for the writer to open.
  const std::string& scratch_path() const { return scratch_; }
  // Puts the finished scratch file at the path; on an error it is removed.
  absl::Status Publish();

 private:
  ScratchFile(std::string path, std::string scratch, bool overwrite, int slot)
      : path_(std::move(path)), scratch_(std::move(scratch)), overwrite_(overwrite), registry_slot_(slot) {}
  std::string path_;
  std::string scratch_;
  bool overwrite_;
  int registry_slot_;
  bool published_ = false;
};

// The most a view of a trace (export, dump, report) writes for a trace of `trace_bytes`: 256 bytes
// for each byte of the trace plus 64 KiB. Real traces come to 3 (Perfetto) to 10 (Chrome JSON,
// dump) times their size; a trace made to amplify (one long name or deep stack named by every
// record) is stopped at the bound with one error line rather than filling the disk.
inline constexpr uint64_t kOutputBytesPerTraceByte = 256;
inline constexpr uint64_t kOutputFixedBytes = 64 * 1024;
inline uint64_t TraceOutputBound(uint64_t trace_bytes) {
  return trace_bytes > (UINT64_MAX - kOutputFixedBytes) / kOutputBytesPerTraceByte
             ? UINT64_MAX
             : kOutputBytesPerTraceByte * trace_bytes + kOutputFixedBytes;
}
// The reason SetByteLimit names for that bound.
std::string TraceOutputBoundReason(uint64_t trace_bytes);

// Removes the files of every OutputFile being written (a temporary file, or without overwrite the
// file created at the path): async-signal-safe, for a handler of a signal that ends the process.
void RemovePartialOutputs();
// Installs handlers for SIGINT, SIGTERM and SIGHUP that call RemovePartialOutputs() and then end
// the process by the same signal, as it would have ended without them (the `cuscope` command's
// main: an export stopped with Ctrl-C leaves no hidden file of hundreds of megabytes behind).
void RemovePartialOutputsOnSignals();

// Writes `contents` as the whole file at `path`, by the rule above.
absl::Status WriteOutputFile(const std::string& path, std::string_view contents, bool overwrite);

// For a file that grows by rewriting (the tuning log): its contents now, "" when it does not exist.
// A symbolic link, or anything but a regular file, is refused with one line naming the path. Write
// the old contents and the addition back with WriteOutputFile(path, ..., /*overwrite=*/true).
absl::StatusOr<std::string> ReadFileForRewrite(const std::string& path);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_OUTPUT_FILE_H_
