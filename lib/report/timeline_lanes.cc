#include "lib/report/timeline_lanes.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/core/kernel_names.h"
#include "lib/core/kernel_selection.h"

namespace cuscope::report {
namespace {

// Nesting levels drawn per host thread and kind; the last level takes everything deeper.
constexpr size_t kMaxDepth = 3;

SliceCategory CopyCategory(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD:
      return SliceCategory::kCopyHtoD;
    case v1::COPY_KIND_DTOH:
      return SliceCategory::kCopyDtoH;
    default:
      return SliceCategory::kCopyOther;
  }
}

const char* CopyName(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD:
      return "memcpy HtoD";
    case v1::COPY_KIND_DTOH:
      return "memcpy DtoH";
    case v1::COPY_KIND_DTOD:
      return "memcpy DtoD";
    case v1::COPY_KIND_HTOH:
      return "memcpy HtoH";
    case v1::COPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

SliceCategory ApiCategoryOf(core::ApiCategory c) {
  switch (c) {
    case core::ApiCategory::kSync:
      return SliceCategory::kApiSync;
    case core::ApiCategory::kCopy:
      return SliceCategory::kApiCopy;
    case core::ApiCategory::kAlloc:
      return SliceCategory::kApiAlloc;
    case core::ApiCategory::kSetup:
      return SliceCategory::kApiSetup;
    case core::ApiCategory::kLaunch:
      return SliceCategory::kApiLaunch;
    case core::ApiCategory::kOther:
      return SliceCategory::kApiOther;
  }
  return SliceCategory::kApiOther;
}

// Splits intervals in start order into nesting levels (a call inside a call goes one level down),
// capped at kMaxDepth levels: the last level takes everything deeper. `interval_of(item)` gives
// {start, end}; `add(level, item)` receives each item.
template <typename Item, typename IntervalOf, typename Add>
void ByDepth(const std::vector<Item>& items, IntervalOf&& interval_of, Add&& add) {
  std::vector<uint64_t> open_ends;
  for (const Item& item : items) {
    const auto [start, end] = interval_of(item);
    while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
    add(std::min(open_ends.size(), kMaxDepth - 1), item);
    open_ends.push_back(std::max(start, end));
  }
}

// The lanes of one nesting kind of a thread ("CUDA calls", "NVTX"), created as levels are reached:
// the first is called `title`, the deeper ones "`title`, level N".
class LevelLanes {
 public:
  LevelLanes(std::string group, std::string title, std::string kind, std::vector<Lane>* lanes)
      : group_(std::move(group)), title_(std::move(title)), kind_(std::move(kind)), lanes_(lanes) {}

  void Add(size_t level, const SliceInput& item) {
    while (lane_of_level_.size() <= level) {
      lane_of_level_.push_back(lanes_->size());
      const size_t n = lane_of_level_.size();
      lanes_->push_back(Lane{group_, n == 1 ? title_ : absl::StrCat(title_, ", level ", n), kind_, {}});
    }
    (*lanes_)[lane_of_level_[level]].items.push_back(item);
  }

 private:
  std::string group_, title_, kind_;
  std::vector<Lane>* lanes_;
  std::vector<size_t> lane_of_level_;
};

// Per device, a lane per stream; kernels, copies and memsets as slices.
void AddDeviceLanes(const core::Trace& trace, const analysis::Timeline& timeline, NameTable* names,
                    std::vector<Lane>* lanes) {
  absl::flat_hash_map<uint32_t, uint32_t> kernel_name_of_signature;
  for (const analysis::DeviceTimeline& d : timeline.devices()) {
    std::string group = absl::StrCat("GPU ", d.device);
    for (const v1::Device& dev : trace.header.devices()) {
      if (dev.id() == d.device && !dev.name().empty()) absl::StrAppend(&group, " · ", dev.name());
    }
    std::map<uint32_t, size_t> lane_of_stream;
    for (analysis::OpRef op : d.ops) {
      const uint32_t stream = timeline.OpStream(op);
      auto [it, inserted] = lane_of_stream.try_emplace(stream, lanes->size());
      if (inserted) lanes->push_back(Lane{group, absl::StrCat("stream ", stream), "gpu", {}});
      const intervals::Interval iv = timeline.OpInterval(op);
      SliceInput item{iv.begin, iv.end, 0, SliceCategory::kKernel};
      switch (op.kind()) {
        case analysis::OpKind::kKernel: {
          // Demangling is slow and a kernel is launched many times: once per signature.
          const core::KernelRow& k = trace.kernels[op.index()];
          auto [nit, new_sig] = kernel_name_of_signature.try_emplace(k.signature, 0);
          if (new_sig) nit->second = names->Intern(core::ShortKernelName(timeline.KernelName(k)));
          item.name = nit->second;
          break;
        }
        case analysis::OpKind::kMemcpy: {
          const core::MemcpyRecord& m = trace.memcpys[op.index()];
          item.name = names->Intern(CopyName(m.copy_kind));
          item.category = CopyCategory(m.copy_kind);
          break;
        }
        case analysis::OpKind::kMemset:
          item.name = names->Intern("memset");
          item.category = SliceCategory::kMemset;
          break;
      }
      (*lanes)[it->second].items.push_back(item);
    }
  }
}

// Per host thread, its CUDA calls and its NVTX ranges, each split into nesting levels.
void AddThreadLanes(const core::Trace& trace, const analysis::Timeline& timeline, NameTable* names,
                    std::vector<Lane>* lanes) {
  for (const analysis::ThreadTimeline& t : timeline.threads()) {
    const std::string group = timeline.ThreadLabel(t.thread);
    LevelLanes api(group, "CUDA calls", "api", lanes);
    ByDepth(
        t.api_calls,
        [&](uint32_t index) { return std::make_pair(trace.api_calls[index].start, trace.api_calls[index].end); },
        [&](size_t level, uint32_t index) {
          const core::ApiCallRow& call = trace.api_calls[index];
          api.Add(level, SliceInput{call.start, call.end, names->Intern(timeline.ApiName(call)),
                                    ApiCategoryOf(timeline.Traits(call).category)});
        });
    LevelLanes nvtx(group, "NVTX", "nvtx", lanes);
    ByDepth(
        t.ranges, [](const analysis::NvtxRange& r) { return std::make_pair(r.begin, r.end); },
        [&](size_t level, const analysis::NvtxRange& r) {
          const std::string& name = trace.dict.str(r.name);
          nvtx.Add(level, SliceInput{r.begin, r.end, names->Intern(name.empty() ? "(unnamed range)" : name),
                                     SliceCategory::kNvtx});
        });
  }
}

}  // namespace

uint32_t NameTable::Intern(std::string_view name) {
  auto [it, inserted] = index_.try_emplace(std::string(name), static_cast<uint32_t>(names_.size()));
  if (inserted) names_.emplace_back(name);
  return it->second;
}

std::vector<Lane> CollectLanes(const core::Trace& trace, const analysis::Timeline& timeline, NameTable* names) {
  std::vector<Lane> lanes;
  AddDeviceLanes(trace, timeline, names, &lanes);
  AddThreadLanes(trace, timeline, names, &lanes);
  return lanes;
}

std::vector<Slice> DownsampleLane(const std::vector<SliceInput>& items, uint64_t origin, uint64_t bucket_ns) {
  std::vector<Slice> out;
  if (bucket_ns == 0) bucket_ns = 1;
  struct Group {
    uint64_t bucket = 0;
    uint64_t start = 0, end = 0, busy = 0;
    uint32_t count = 0;
    // Time per name inside the group, for the name it is shown under (few distinct names in practice).
    std::vector<std::pair<uint32_t, uint64_t>> names;
    SliceCategory category = SliceCategory::kKernel;
  } group;
  const auto flush = [&]() {
    if (group.count == 0) return;
    uint32_t best = group.names.front().first;
    uint64_t best_time = 0;
    for (const auto& [name, time] : group.names) {
      if (time > best_time) {
        best = name;
        best_time = time;
      }
    }
    out.push_back(Slice{group.start - origin, group.end - group.start, best, group.category, group.count, group.busy});
    group = Group();
  };
  for (const SliceInput& item : items) {
    const uint64_t start = std::max(item.start, origin);
    const uint64_t end = std::max(start, item.end);
    const uint64_t length = end - start;
    if (length >= bucket_ns) {
      flush();
      out.push_back(Slice{start - origin, length, item.name, item.category, 1, length});
      continue;
    }
    const uint64_t bucket = (start - origin) / bucket_ns;
    if (group.count > 0 && group.bucket != bucket) flush();
    if (group.count == 0) {
      group.bucket = bucket;
      group.start = start;
      group.category = item.category;
    }
    group.end = std::max(group.end, end);
    group.busy += length;
    ++group.count;
    auto it = std::find_if(group.names.begin(), group.names.end(), [&](const auto& p) { return p.first == item.name; });
    if (it != group.names.end()) {
      it->second += length;
    } else if (group.names.size() < 16) {
      group.names.emplace_back(item.name, length);
    }
  }
  flush();
  return out;
}

}  // namespace cuscope::report
