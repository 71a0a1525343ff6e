// Places the slices of one track on lanes (the track itself and overflow tracks beside it) so
// that the slices of every lane nest properly in the viewer.
//
// Perfetto and the Chrome JSON importers sort events by timestamp, ties in file order, and pair a
// slice's end with the innermost open slice of its track. Slices that partly overlap (copies that
// overlap kernels on one stream, NVTX start/end ranges, findings) would be paired wrongly, so they
// go to another lane. Slices arrive in chunk order, not time order, so the check must hold for any
// arrival order: a slice is placed on the first lane where, with every slice placed there before
// it (and written to the output before it),
//   * it is disjoint, or touches one that ends where it begins (that end is written first), or
//   * it contains them entirely, starting strictly before them (its begin sorts first), or
//   * it has exactly their extent.
// A slice that would sit inside one placed earlier goes to another lane: that slice's children are
// not remembered. Zero-length slices nest anywhere (their begin and end sort next to each other)
// and always go to lane 0.
//
// Memory per lane: the top-level slices placed so far, at most kMaxRoots; beyond that the oldest
// half is forgotten and the lane only takes slices that begin at or after the end of the last one
// forgotten. Slices handed over in end order (as CUPTI delivers records) take the fast path.
#ifndef CUSCOPE_LIB_EXPORT_LANE_ALLOCATOR_H_
#define CUSCOPE_LIB_EXPORT_LANE_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuscope::exporter {

class LaneAllocator {
 public:
  static constexpr size_t kMaxLanes = 64;
  static constexpr size_t kMaxRoots = 512;

  // The lane for slice [start, end] (0 = the track itself), which the caller writes out before
  // placing the next slice; -1 when it fits none of kMaxLanes lanes.
  int Place(uint64_t start, uint64_t end);

  size_t lane_count() const { return lanes_.size(); }

 private:
  struct Root {
    uint64_t start;
    uint64_t end;
  };
  struct Lane {
    std::vector<Root> roots;  // disjoint, by start (so by end too)
    uint64_t frontier = 0;    // end of the last forgotten root
    bool TryPlace(uint64_t start, uint64_t end);
  };
  std::vector<Lane> lanes_;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_LANE_ALLOCATOR_H_
