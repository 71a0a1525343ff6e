// The exporter's track ids (event_sink.h Track::id): unique, stable, computed from what a record
// names (a device and stream, a host thread), so that no table is needed to find a record's track.
#ifndef CUSCOPE_LIB_EXPORT_TRACK_IDS_H_
#define CUSCOPE_LIB_EXPORT_TRACK_IDS_H_

#include <cstdint>

#include "lib/core/trace_reader.h"

namespace cuscope::exporter {

// The kind in the top byte, an id below it, the lane in the low 16 bits: lane N of a track is the
// track's id + N.
enum class TrackKind : uint64_t {
  kProcess = 1,
  kThread,
  kNvtx,
  kOverhead,
  kDevice,
  kUtilization,
  kStream,
  kWindows,
  kFindings,
  kFinding,
};

inline uint64_t TrackId(TrackKind kind, uint64_t id) {
  return (static_cast<uint64_t>(kind) << 56) | ((id & ((uint64_t{1} << 40) - 1)) << 16);
}
// A stream's id keeps 8 bits of its device id beside the 32-bit stream id (40 bits in all): the
// reader refuses device ids of kMaxDevices and over, so no two devices share a track.
static_assert(core::kMaxDevices <= 256, "StreamTrackId keeps 8 bits of a device id");
inline uint64_t StreamTrackId(uint32_t device, uint32_t stream) {
  return TrackId(TrackKind::kStream, (uint64_t{device & 0xffu} << 32) | stream);
}

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_TRACK_IDS_H_
