// NVTX ranges from their records: CUPTI writes a range as a start record and an end record that
// share an id, in chunks that may hold the end before the start (another thread's buffer flushed
// first). One pairing for every export that draws or stores ranges (the timeline exporter, the
// SQLite export), across chunks.
#ifndef CUSCOPE_LIB_EXPORT_NVTX_RANGE_PAIRING_H_
#define CUSCOPE_LIB_EXPORT_NVTX_RANGE_PAIRING_H_

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/core/records.h"

namespace cuscope::exporter {

class NvtxRangePairing {
 public:
  struct Range {
    core::NvtxRow start;
    core::NvtxRow end;
  };

  // A range start or end: the range it completes, if any. Marks (and other kinds) complete nothing:
  // the caller handles them.
  std::optional<Range> Add(const core::NvtxRow& row) {
    if (row.kind == v1::NVTX_KIND_RANGE_START) {
      if (auto early = early_ends_.find(row.id); early != early_ends_.end()) {
        Range r{row, early->second};
        early_ends_.erase(early);
        return r;
      }
      open_[row.id] = row;
    } else if (row.kind == v1::NVTX_KIND_RANGE_END) {
      if (auto it = open_.find(row.id); it != open_.end()) {
        Range r{it->second, row};
        open_.erase(it);
        return r;
      }
      early_ends_[row.id] = row;
    }
    return std::nullopt;
  }

  // The starts no end has come for, by start time.
  std::vector<core::NvtxRow> Unclosed() const {
    std::vector<core::NvtxRow> out;
    out.reserve(open_.size());
    for (const auto& [id, row] : open_) out.push_back(row);
    std::sort(out.begin(), out.end(), [](const core::NvtxRow& a, const core::NvtxRow& b) {
      return a.time != b.time ? a.time < b.time : a.id < b.id;
    });
    return out;
  }
  size_t unclosed() const { return open_.size(); }
  // Ends whose start never came.
  size_t orphan_ends() const { return early_ends_.size(); }

 private:
  absl::flat_hash_map<uint64_t, core::NvtxRow> open_;
  absl::flat_hash_map<uint64_t, core::NvtxRow> early_ends_;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_NVTX_RANGE_PAIRING_H_
