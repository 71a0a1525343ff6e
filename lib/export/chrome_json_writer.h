// Writes the exporter's events in the Chrome trace-event JSON format (the "JSON Array/Object
// Format" that chrome://tracing, Perfetto and speedscope read): {"traceEvents":[...]} with one
// event per line, written as it is handed over (a file of millions of events is never held as a
// document): strings and numbers are written by the project's JSON writer (lib/core/json.h), in
// its kMinimal style.
//
//   * tracks become processes and threads: a host process is its pid, a host thread its tid; a
//     top-level group (a GPU, the findings) becomes a process of its own with a pid from
//     kSyntheticBase up, and a slice track a thread in its parent's process: a stream takes its
//     stream id as tid, other slice tracks tids from kSyntheticBase up. "M" events name them
//     (process_name, thread_name) and order them (process_sort_index, thread_sort_index);
//   * slices are "X" (complete) events, instants "i" events with thread scope, counter samples
//     "C" events on the counter's process, named "<track name>" with the unit as the value's key;
//   * flows use bind ids: the source slice carries "bind_id" and "flow_out", the target
//     "bind_id" and "flow_in", so a flow binds to its slices whatever their timestamps;
//   * args are the event's "args" object.
//
// Chrome JSON has no interning: every event spells its strings out. A name longer than
// kMaxNameBytes (a kernel's full template name can be kilobytes; a hostile trace's, megabytes) is
// cut there and ends "... (N bytes)", a string argument at kMaxArgBytes, so that an event stays
// about a kilobyte whatever the trace names (Perfetto interns, and keeps names whole).
//
// Timestamps: microseconds (with three decimals, so nanoseconds stay exact) since the session's
// start, ExportInfo.time_origin_ns (the time base of analyze, dump and the SQLite export), which
// the output records as "cuscope_session_start_ns" (an integer) in "otherData": as absolute CUPTI
// nanoseconds (about 1.7e18) a timestamp, read as a double, would lose the nanoseconds.
#ifndef CUSCOPE_LIB_EXPORT_CHROME_JSON_WRITER_H_
#define CUSCOPE_LIB_EXPORT_CHROME_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "lib/core/output_file.h"
#include "lib/export/event_sink.h"

namespace cuscope::exporter {

class ChromeJsonWriter final : public EventSink {
 public:
  // Process and thread ids of tracks that are not host processes and threads start here: above
  // any Linux pid (pid_max is at most 2^22) and within the 32 bits viewers keep.
  static constexpr uint32_t kSyntheticBase = 1'000'000'000;
  static constexpr size_t kMaxNameBytes = 1024;
  static constexpr size_t kMaxArgBytes = 512;

  // `out` must outlive the writer; the caller closes it after Finish().
  explicit ChromeJsonWriter(core::OutputFile* out) : out_(out) {}

  absl::Status Start(const ExportInfo& info) override;
  absl::Status AddTrack(const Track& track) override;
  absl::Status AddSlice(const Slice& slice) override;
  absl::Status AddInstant(const Instant& instant) override;
  absl::Status AddCounter(uint64_t track, uint64_t time, double value) override;
  absl::Status Finish() override;

 private:
  struct Place {
    uint32_t pid = 0;
    uint32_t tid = 0;
    std::string counter_name;  // counters
    std::string unit;          // counters
  };

  // Starts an event object: the separator, then `{"ph":"<phase>","pid":..,"tid":..`.
  void BeginEvent(char phase, const Place& place, bool with_tid = true);
  void Metadata(std::string_view name, uint32_t pid, const uint32_t* tid, std::string_view key, std::string_view text,
                int64_t number, bool is_number);
  void Time(std::string_view key, uint64_t ns, bool relative);
  void Args(absl::Span<const Arg> args);
  // `text` as a JSON string, cut to `max_bytes` (see above).
  void String(std::string_view text, size_t max_bytes);
  uint32_t SyntheticTid(uint32_t pid, int64_t preferred);

  core::OutputFile* out_;
  uint64_t origin_ = 0;
  bool first_event_ = true;
  uint32_t next_pid_ = kSyntheticBase;
  uint32_t next_tid_ = kSyntheticBase;
  absl::flat_hash_map<uint64_t, Place> places_;
  absl::flat_hash_set<std::pair<uint32_t, uint32_t>> used_tids_;
  std::string source_path_;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_CHROME_JSON_WRITER_H_
