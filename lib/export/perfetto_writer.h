// Writes the exporter's events as a Perfetto trace (proto/perfetto/trace_subset.proto): the
// binary `Trace` message, written one `TracePacket` at a time as field 1, so a packet is in the
// output as soon as its event is handed over and nothing accumulates.
//
// Layout of the output:
//   * one packet sequence (trusted_packet_sequence_id 1); its first packet clears the incremental
//     state (SEQ_INCREMENTAL_STATE_CLEARED), every packet that refers to interned data (slice
//     begins, instants) says it needs it (SEQ_NEEDS_INCREMENTAL_STATE);
//   * a TrackDescriptor packet per track (event_sink.h Track): processes and threads with their
//     ProcessDescriptor / ThreadDescriptor, groups and slice tracks by name under their parent
//     (parent_uuid), counters with a CounterDescriptor; uuids are 1, 2, 3... in declaration order;
//   * a slice is a TYPE_SLICE_BEGIN packet (name, category, debug annotations, flows) and a
//     TYPE_SLICE_END packet right after it; instants are TYPE_INSTANT, counter samples
//     TYPE_COUNTER with double_counter_value;
//   * event names, categories, annotation names and string annotation values are interned: the
//     first packet that uses one carries it in interned_data, later packets refer to its iid.
//     Memory: one entry per distinct string.
//   * flows: Slice.flow_out goes to flow_ids, Slice.flow_in to terminating_flow_ids.
//
// Timestamps: the trace's CUPTI timestamps (CLOCK_REALTIME-based nanoseconds), as they are, with
// no timestamp_clock_id and no ClockSnapshot, so Perfetto takes them on its default trace clock.
// Nothing else in the output has a timestamp on another clock, so no conversion is needed; the UI
// shows times from the first event, and the absolute values still line up with other cuscope
// traces of the same host.
#ifndef CUSCOPE_LIB_EXPORT_PERFETTO_WRITER_H_
#define CUSCOPE_LIB_EXPORT_PERFETTO_WRITER_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "lib/core/output_file.h"
#include "lib/export/event_sink.h"
#include "perfetto/trace_subset.pb.h"

namespace cuscope::exporter {

class PerfettoWriter final : public EventSink {
 public:
  static constexpr uint32_t kSequenceId = 1;

  // `out` must outlive the writer; the caller closes it after Finish().
  explicit PerfettoWriter(core::OutputFile* out) : out_(out) {}

  absl::Status Start(const ExportInfo& info) override;
  absl::Status AddTrack(const Track& track) override;
  absl::Status AddSlice(const Slice& slice) override;
  absl::Status AddInstant(const Instant& instant) override;
  absl::Status AddCounter(uint64_t track, uint64_t time, double value) override;
  absl::Status Finish() override;

 private:
  // Ids of interned strings of one kind (each kind has its own id space).
  class Interner {
   public:
    // The iid of `name`, and whether this is its first use.
    std::pair<uint64_t, bool> Get(const Name& name);

   private:
    // A slice looks up a dozen keyed names, mostly the same few: a direct-mapped cache in front of
    // the map answers those with a multiply and a compare.
    struct CacheEntry {
      uint64_t key = 0;
      uint64_t iid = 0;
    };
    std::array<CacheEntry, 256> cache_{};
    absl::flat_hash_map<uint64_t, uint64_t> by_key_;
    absl::flat_hash_map<std::string, uint64_t> by_text_;
    uint64_t next_ = 1;
  };

  // The uuid of a declared track: small numbers in declaration order, so that every event's
  // track_uuid is a one- or two-byte varint (the exporter's ids use all 64 bits).
  absl::StatusOr<uint64_t> Uuid(uint64_t track);
  uint64_t EventName(const Name& name);
  uint64_t Category(const Name& name);
  void Annotate(absl::Span<const Arg> args);
  // Serializes packet_ (with event_ or descriptor_ attached) into the output and clears it.
  void WritePacket(bool needs_state);
  void WriteEvent(uint64_t time, bool needs_state);

  core::OutputFile* out_;
  uint64_t first_ns_ = 0;
  bool first_packet_ = true;
  perfetto::protos::TracePacket packet_;
  perfetto::protos::TrackEvent event_;
  perfetto::protos::TrackDescriptor descriptor_;
  Interner names_, categories_, annotation_names_, annotation_strings_;
  absl::flat_hash_map<uint64_t, uint64_t> uuids_;
  uint64_t last_track_ = 0;
  uint64_t last_uuid_ = 0;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_PERFETTO_WRITER_H_
