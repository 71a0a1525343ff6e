// A set of correlation ids in about one bit per id: CUPTI hands them out from one counter per
// process, so the ids of a trace are dense. Ids are kept in pages of 4096 bits; sparse ids (a
// damaged file) cost a page each, never an allocation sized by an id's value.
#ifndef CUSCOPE_LIB_EXPORT_CORRELATION_SET_H_
#define CUSCOPE_LIB_EXPORT_CORRELATION_SET_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace cuscope::exporter {

class CorrelationSet {
 public:
  void Insert(uint64_t id) {
    size_t index = Find(id >> kPageShift);
    if (index == kNone) {
      index = pages_.size();
      index_.emplace(id >> kPageShift, index);
      pages_.emplace_back().fill(0);
      last_page_ = id >> kPageShift;
      last_index_ = index;
    }
    pages_[index][(id & kPageMask) >> 6] |= uint64_t{1} << (id & 63);
  }
  bool Contains(uint64_t id) const {
    const size_t index = Find(id >> kPageShift);
    return index != kNone && (pages_[index][(id & kPageMask) >> 6] >> (id & 63) & 1) != 0;
  }
  size_t memory_bytes() const { return pages_.size() * sizeof(Bits); }

 private:
  static constexpr int kPageShift = 12;
  static constexpr uint64_t kPageMask = (uint64_t{1} << kPageShift) - 1;
  static constexpr size_t kNone = ~size_t{0};
  using Bits = std::array<uint64_t, (1u << kPageShift) / 64>;

  // The index of a page in pages_, or kNone. Lookups come in runs on one page: the last one found
  // is remembered.
  size_t Find(uint64_t page) const {
    if (last_index_ != kNone && last_page_ == page) return last_index_;
    auto it = index_.find(page);
    if (it == index_.end()) return kNone;
    last_page_ = page;
    last_index_ = it->second;
    return last_index_;
  }

  absl::flat_hash_map<uint64_t, size_t> index_;
  std::vector<Bits> pages_;
  mutable uint64_t last_page_ = 0;
  mutable size_t last_index_ = kNone;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_CORRELATION_SET_H_
