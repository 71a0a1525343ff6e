// Reads a Perfetto trace written by the exporter back, field by field, with the classes generated
// from proto/perfetto/trace_subset.proto, the way Perfetto's trace processor does: interned data
// per packet sequence, track descriptors, events sorted by timestamp (ties in file order) and each
// slice end paired with the innermost open slice of its track. Anything the trace processor would
// reject or mispair is listed in `errors`.
#ifndef CUSCOPE_TESTS_EXPORT_PERFETTO_DECODE_H_
#define CUSCOPE_TESTS_EXPORT_PERFETTO_DECODE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "perfetto/trace_subset.pb.h"

namespace cuscope::exporter::testing {

using Value = std::variant<uint64_t, int64_t, double, bool, std::string>;

struct DecodedSlice {
  uint64_t track = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  std::string name;
  std::vector<std::string> categories;
  std::map<std::string, Value> args;
  std::vector<uint64_t> flow_ids;
  std::vector<uint64_t> terminating_flow_ids;
  int depth = 0;  // 0: top level on its track
};

struct DecodedTrace {
  std::vector<perfetto::protos::TracePacket> packets;
  std::map<uint64_t, perfetto::protos::TrackDescriptor> tracks;
  std::vector<DecodedSlice> slices;                                       // closed slices, by start
  std::vector<DecodedSlice> instants;                                     // start == end
  std::map<uint64_t, std::vector<std::pair<uint64_t, double>>> counters;  // by track, by time
  std::vector<std::string> errors;

  // The slices of one track (by start), and those with a name.
  std::vector<const DecodedSlice*> OnTrack(uint64_t track) const;
  std::vector<const DecodedSlice*> Named(const std::string& name) const;
  // The uuid of the track with this name (descriptor name, process or thread name); 0 if none.
  uint64_t TrackNamed(const std::string& name) const;
};

DecodedTrace DecodePerfetto(const std::string& bytes);

}  // namespace cuscope::exporter::testing

#endif  // CUSCOPE_TESTS_EXPORT_PERFETTO_DECODE_H_
