// Streaming reader of trace files.
//
// It accepts a file cut at any byte: every complete block is returned, and `tail_bytes_dropped()`
// says how many bytes at the end formed no complete block. A file that is not a trace, or of a
// newer format version, is refused at Open with InvalidArgument / FailedPrecondition. A block
// that does not decode is reported as DataLoss, naming its byte offset.
#ifndef CUSCOPE_LIB_CORE_TRACE_READER_H_
#define CUSCOPE_LIB_CORE_TRACE_READER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/dictionary.h"
#include "lib/core/records.h"

namespace cuscope::core {

// One chunk's rows with absolute timestamps and correlation ids.
struct DecodedChunk : RecordRows {
  uint64_t sequence = 0;
  std::vector<v1::CaptureWindow> windows;
  std::optional<v1::TopDownSelection> top_down;
  std::optional<v1::CaptureStats> stats;
  void Clear();
};

// Decodes a chunk's rows; its definitions must already be in `dict`.
absl::Status DecodeChunk(const v1::Chunk& chunk, const Dictionary& dict, DecodedChunk* out);

class TraceReader {
 public:
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);
  // Reads from memory (the fuzzers and tests use this).
  static absl::StatusOr<std::unique_ptr<TraceReader>> FromBytes(std::string bytes);
  ~TraceReader();

  const v1::Header& header() const { return header_; }
  const Dictionary& dictionary() const { return dict_; }

  // Fills `out` with the next chunk. Returns false at the end of the file (a cut tail included).
  absl::StatusOr<bool> Next(DecodedChunk* out);

  uint64_t chunks_read() const { return chunks_read_; }
  uint64_t bytes_read() const { return consumed_; }
  // Bytes at the end of the file that formed no complete block (a cut file); valid after Next
  // returned false.
  uint64_t tail_bytes_dropped() const { return tail_dropped_; }

 private:
  TraceReader() = default;
  absl::Status ReadHeader();
  // Reads one framed block into block_; false at the end of the data (or a cut tail).
  absl::StatusOr<bool> ReadBlock();
  // Makes at least `n` unread bytes available in the buffer if the source has them.
  bool Fill(size_t n);

  std::FILE* file_ = nullptr;
  std::string buffer_;
  size_t pos_ = 0;         // read position in buffer_
  uint64_t consumed_ = 0;  // bytes of the source consumed as complete blocks (magic included)
  bool eof_ = false;
  v1::Header header_;
  Dictionary dict_;
  v1::Block block_;
  uint64_t chunks_read_ = 0;
  uint64_t tail_dropped_ = 0;
};

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_TRACE_READER_H_
