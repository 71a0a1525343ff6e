// The file an export is written to, through a buffer the writers append to directly: an event
// costs a few appends and a size check, and the file gets writes of about kFlushBytes.
//
// The first write error is kept and reported by status() and Close(); appends after it are
// dropped, so a writer need not check every call.
#ifndef CUSCOPE_LIB_EXPORT_OUTPUT_FILE_H_
#define CUSCOPE_LIB_EXPORT_OUTPUT_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cuscope::exporter {

class OutputFile {
 public:
  static constexpr size_t kFlushBytes = 1 << 20;

  // Creates `path` (0666 less the umask). An existing file is refused unless `overwrite`.
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(const std::string& path, bool overwrite);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Writers append to this buffer and call MaybeFlush() after each event.
  std::string& buffer() { return buffer_; }
  void Append(std::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }

  // Writes out the buffer and closes the file; the first error of any write.
  absl::Status Close();
  // Closes and removes the file: for an export that failed half way.
  void Discard();

  const absl::Status& status() const { return status_; }
  // Bytes handed to the file so far (buffered ones included).
  uint64_t bytes() const { return flushed_ + buffer_.size(); }
  const std::string& path() const { return path_; }

 private:
  OutputFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void Flush();

  int fd_ = -1;
  std::string path_;
  std::string buffer_;
  uint64_t flushed_ = 0;
  absl::Status status_;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_OUTPUT_FILE_H_
