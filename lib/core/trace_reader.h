// Streaming reader of trace files.
//
// It accepts a file cut at any byte: every complete block is returned, and `tail_bytes_dropped()`
// says how many bytes at the end formed no complete block. A file that is not a trace, or of a
// newer format version, is refused at Open with InvalidArgument / FailedPrecondition. A block
// that does not decode is reported as DataLoss, naming its byte offset.
//
// What a decoded trace promises its readers (the analyzer and the exporters size tables, pack
// track ids and loop by these values, so the reader checks them; a chunk that breaks one is
// reported as DataLoss naming the field, and the chunks before it are kept; a header that breaks
// one is refused at Open with DataLoss):
//   * rows name only defined signatures, API functions, threads and strings;
//   * device ids are below kMaxDevices, and the header declares at most kMaxDevices devices. Every
//     device id in a trace is a CUDA device ordinal (CUPTI's deviceId, the collector's header):
//     the devices one process sees, numbered from 0 (CUDA_VISIBLE_DEVICES renumbers them), and
//     even the largest single-host systems have 16 GPUs. The bound covers every row that names a
//     device (kernel signatures, copies, memsets, kernel metrics, counter series, the top-down's
//     hot kernels) except memory-allocation rows, whose device only `cuscope dump` prints;
//   * a kernel signature's registers per thread fit CUPTI's 16-bit field (the hardware allows
//     255: the occupancy calculation says a launch over that cannot run), its shared memory sizes
//     and its grid and block dimensions are not negative.
// Stream ids, correlation ids, byte counts and timestamps are taken as they are: real values use
// the whole range, and every consumer works with any value (an end before its start is an empty
// span). The number of distinct values is bounded by the rows, so by the file's size.
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
#include "lib/core/record_codec/decode_checks.h"  // kMaxDevices, kMaxRegistersPerThreadField
#include "lib/core/records.h"

namespace cuscope::core {

// One chunk's rows with absolute timestamps and correlation ids.
struct DecodedChunk : RecordRows {
  uint64_t sequence = 0;
  std::vector<v1::CaptureWindow> windows;
  std::optional<v1::TopDownSelection> top_down;
  std::vector<v1::MonitorInterval> monitor_intervals;
  std::optional<v1::CaptureStats> stats;
  std::optional<v1::ClockReference> clock_reference;
  void Clear();
};

// Decodes a chunk's rows, each kind by its decoder in lib/core/record_codec/; its definitions must
// already be in `dict`.
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
