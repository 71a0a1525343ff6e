// The names the exporter hands to writers: interning keys (event_sink.h Name::key) and the fixed
// strings (categories, argument names, event names) every export uses.
#ifndef CUSCOPE_LIB_EXPORT_EXPORT_NAMES_H_
#define CUSCOPE_LIB_EXPORT_EXPORT_NAMES_H_

#include <cstdint>
#include <string_view>

#include "absl/strings/string_view.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/export/event_sink.h"

namespace cuscope::exporter {

// Interning keys (event_sink.h): the kind of name in the top byte, an id below it.
enum class NameKind : uint64_t {
  kString = 1,      // a dictionary string as it is
  kKernel,          // the demangled kernel name of a dictionary string
  kReplayedKernel,  // the same, marked as a metrics replay
  kApi,             // an API function's display name, by function id
  kFixed,           // kFixedNames
  kDims,            // a launch dimension text "(x, y, z)", by dims_ id
  kCopy,            // "Memcpy HtoD", by copy kind
  kMemoryKind,      // "pinned", by memory kind
  kLaunchSite,      // a call stack's launch site, by call stack id
};

// absl::StrCat takes absl::string_view, which is not std::string_view in this abseil.
inline absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

inline Name Keyed(NameKind kind, uint64_t id, std::string_view text) {
  return Name{(static_cast<uint64_t>(kind) << 56) | id, text};
}

// Fixed strings: categories, argument names, event names.
enum class Fixed : uint32_t {
  kCatKernel,
  kCatReplayedKernel,
  kCatMemcpy,
  kCatMemset,
  kCatRuntime,
  kCatDriver,
  kCatNvtx,
  kCatOverhead,
  kCatTimelineWindow,
  kCatMetricsWindow,
  kCatFinding,
  kArgCorrelation,
  kArgGrid,
  kArgBlock,
  kArgRegisters,
  kArgStaticShared,
  kArgDynamicShared,
  kArgDevice,
  kArgStream,
  kArgGraph,
  kArgGraphNode,
  kArgReplayed,
  kArgMangled,
  kArgBytes,
  kArgCopyKind,
  kArgSource,
  kArgDestination,
  kArgAsync,
  kArgThroughput,
  kArgValue,
  kArgMemoryKind,
  kArgReturnCode,
  kArgDomain,
  kArgUnterminated,
  kArgReason,
  kArgRule,
  kArgSeverity,
  kArgHeadline,
  kArgRecommendation,
  kArgRecoverable,
  kArgRank,
  kArgLaunchedFrom,
  kNameMemset,
  kNameUnnamedRange,
  kNameTimelineWindow,
  kNameMetricsWindow,
  kCount,
};

// A fixed string with its key.
Name F(Fixed f);
// "HtoD", "pinned": the short names Nsight Systems uses.
std::string_view CopyKindName(v1::CopyKind kind);
std::string_view MemoryKindName(v1::MemoryKind kind);
// Keyed names: "HtoD" (copy_kind arguments), "Memcpy HtoD" (a copy's slice name), "pinned".
Name CopyKind(v1::CopyKind kind);
Name CopyName(v1::CopyKind kind);
Name MemoryKind(v1::MemoryKind kind);

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_EXPORT_NAMES_H_
