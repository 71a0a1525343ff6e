// The report page's timeline as lanes of slices, and how a big lane is made small.
//
// A lane is one row of the page's timeline: a GPU stream, or one nesting level of a host thread's
// CUDA calls or NVTX ranges (a call inside a call goes one level down, at most three levels).
//
// Downsampling, per lane: the trace's span is cut into equal buckets; a slice at least one bucket
// long is kept as recorded, and consecutive shorter ones starting in the same bucket are merged
// into one slice that keeps their count, their busy time and the name with the most time.
#ifndef CUSCOPE_LIB_REPORT_TIMELINE_LANES_H_
#define CUSCOPE_LIB_REPORT_TIMELINE_LANES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"

namespace cuscope::report {

// What a slice is, for its colour in the page (report.js's CATEGORIES table uses the same order).
enum class SliceCategory : uint8_t {
  kKernel = 0,
  kCopyHtoD = 1,
  kCopyDtoH = 2,
  kCopyOther = 3,
  kMemset = 4,
  kApiSync = 5,
  kApiCopy = 6,
  kApiAlloc = 7,
  kApiSetup = 8,
  kApiLaunch = 9,
  kApiOther = 10,
  kNvtx = 11,
};

struct SliceInput {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t name = 0;  // index into the document's name table
  SliceCategory category = SliceCategory::kKernel;
};

struct Slice {
  uint64_t start = 0;  // from the origin
  uint64_t duration = 0;
  uint32_t name = 0;  // the recorded slice's, or the merged slices' name with the most time
  SliceCategory category = SliceCategory::kKernel;
  uint32_t count = 1;    // recorded slices it stands for
  uint64_t busy_ns = 0;  // their summed duration
};

// Downsamples one lane. `items` must be in start order, each with start >= origin; `bucket_ns` > 0.
std::vector<Slice> DownsampleLane(const std::vector<SliceInput>& items, uint64_t origin, uint64_t bucket_ns);

// The document's name table: every slice refers to its name by index, so a name repeated in
// 100,000 slices is written once.
class NameTable {
 public:
  uint32_t Intern(std::string_view name);
  const std::vector<std::string>& all() const { return names_; }

 private:
  absl::flat_hash_map<std::string, uint32_t> index_;
  std::vector<std::string> names_;
};

struct Lane {
  std::string group;  // "GPU 0 · NVIDIA H200", "thread 857 (pid 857)"
  std::string label;  // "stream 7", "CUDA calls", "NVTX"
  std::string kind;   // "gpu", "api", "nvtx"
  std::vector<SliceInput> items;  // in the order the timeline holds them (start order in practice)
};

// Every lane of the timeline, in the page's order: per device its streams (in the order their first
// operation starts), then per host thread its CUDA call levels and its NVTX levels. Slice names go
// into `names`.
std::vector<Lane> CollectLanes(const core::Trace& trace, const analysis::Timeline& timeline, NameTable* names);

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_TIMELINE_LANES_H_
