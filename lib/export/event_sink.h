// What the exporter hands to a format writer: tracks, slices, instants and counter samples, in
// the order the trace's chunks produce them. A writer (perfetto_writer.h, chrome_json_writer.h)
// turns each call into output right away; nothing here is kept after the call returns.
//
// Guarantees the exporter gives every writer:
//   * a track is declared before the first event on it, and its parent before it;
//   * the slices of one track, in the order they are handed over, nest properly once stably sorted
//     by timestamp (lane_allocator.h), so a writer that emits a slice as a begin and an end event
//     in call order produces a trace that viewers pair up correctly;
//   * timestamps are CUPTI's nanoseconds, as in the trace (a writer may rebase them).
#ifndef CUSCOPE_LIB_EXPORT_EVENT_SINK_H_
#define CUSCOPE_LIB_EXPORT_EVENT_SINK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace cuscope::exporter {

// A string with an identity for interning: two names with the same nonzero key have the same
// text, so a writer can intern by key without hashing the text (kernel names are long). Key 0:
// intern by text.
struct Name {
  uint64_t key = 0;
  std::string_view text;
};

// A value shown with an event (Perfetto: debug annotation; Chrome JSON: "args").
struct Arg {
  enum class Type : uint8_t { kUint, kInt, kDouble, kBool, kString };
  Name name;
  Type type = Type::kUint;
  union {  // by type
    uint64_t u = 0;
    int64_t i;
    double d;
    bool b;
  };
  Name s;  // kString

  static Arg Uint(Name name, uint64_t v) {
    Arg a;
    a.name = name;
    a.type = Type::kUint;
    a.u = v;
    return a;
  }
  static Arg Int(Name name, int64_t v) {
    Arg a;
    a.name = name;
    a.type = Type::kInt;
    a.i = v;
    return a;
  }
  static Arg Double(Name name, double v) {
    Arg a;
    a.name = name;
    a.type = Type::kDouble;
    a.d = v;
    return a;
  }
  static Arg Bool(Name name, bool v) {
    Arg a;
    a.name = name;
    a.type = Type::kBool;
    a.b = v;
    return a;
  }
  static Arg String(Name name, Name v) {
    Arg a;
    a.name = name;
    a.type = Type::kString;
    a.s = v;
    return a;
  }
};

enum class TrackType : uint8_t {
  kProcess,  // a host process (pid)
  kThread,   // a host thread (pid, tid); its slices are the thread's CUDA API calls
  kGroup,    // a top-level named group with child tracks: a GPU, the findings, the capture windows
  kSlices,   // a named slice track under a parent: a stream, an NVTX lane, a finding
  kCounter,  // a named counter track under a parent
};

struct Track {
  uint64_t id = 0;      // unique, nonzero (Perfetto: the track uuid)
  uint64_t parent = 0;  // 0: top level. kThread's parent is its kProcess track.
  TrackType type = TrackType::kSlices;
  std::string name;
  int32_t pid = 0;                   // kProcess, kThread
  int64_t tid = 0;                   // kThread
  std::vector<std::string> cmdline;  // kProcess
  // Position among the parent's children (lower first).
  int32_t order = 0;
  // For a format with numeric thread ids (Chrome JSON): the id this track would like, e.g. the
  // stream id; 0 = any.
  int64_t preferred_tid = 0;
  std::string unit;  // kCounter, e.g. "%"
};

struct Slice {
  uint64_t track = 0;
  uint64_t start = 0;
  uint64_t end = 0;  // >= start
  Name name;
  Name category;
  absl::Span<const Arg> args;
  // A flow (arrow) that starts at this slice; 0 = none.
  uint64_t flow_out = 0;
  // A flow that ends at this slice; 0 = none. A slice has one or the other.
  uint64_t flow_in = 0;
};

struct Instant {
  uint64_t track = 0;
  uint64_t time = 0;
  Name name;
  Name category;
  absl::Span<const Arg> args;
};

// Facts about the whole export a writer may record in its output's metadata.
struct ExportInfo {
  // Earliest and latest timestamp in the trace (ns); 0 when it has no records.
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;
  // What times count from where a format needs small numbers (Chrome JSON): the session's start, as
  // in every other output of cuscope (a rank set: the earliest rank's start on the shared clock).
  uint64_t time_origin_ns = 0;
  std::string source_path;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Called first, once.
  virtual absl::Status Start(const ExportInfo& info) = 0;
  virtual absl::Status AddTrack(const Track& track) = 0;
  virtual absl::Status AddSlice(const Slice& slice) = 0;
  virtual absl::Status AddInstant(const Instant& instant) = 0;
  virtual absl::Status AddCounter(uint64_t track, uint64_t time, double value) = 0;
  // Called last, once; the writer completes and flushes its output.
  virtual absl::Status Finish() = 0;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_EVENT_SINK_H_
