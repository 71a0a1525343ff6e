// Writes a trace file: the magic and header first, then one framed block per chunk, each with a
// single write so that a crash leaves every chunk written before it intact.
#ifndef CUSCOPE_LIB_CORE_TRACE_WRITER_H_
#define CUSCOPE_LIB_CORE_TRACE_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuscope/v1/trace.pb.h"

namespace cuscope::core {

class TraceWriter {
 public:
  // Creates `path` without following a symbolic link in its last component. An existing file is
  // refused unless `overwrite`. The file gets the permissions of a normal output file (0666 less
  // the umask).
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(const std::string& path, bool overwrite);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  absl::Status WriteHeader(const v1::Header& header);
  absl::Status WriteChunk(const v1::Chunk& chunk);
  // A chunk already framed as a block (lib/core/trace_format.h), as the flight ring keeps them.
  absl::Status WriteFramedChunk(const std::string& framed) { return WriteAll(framed); }
  absl::Status Close();

  uint64_t bytes_written() const { return bytes_written_; }
  const std::string& path() const { return path_; }

 private:
  TraceWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  absl::Status WriteAll(const std::string& bytes);

  int fd_;
  std::string path_;
  uint64_t bytes_written_ = 0;
  std::string scratch_;
  v1::Block block_;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_TRACE_WRITER_H_
