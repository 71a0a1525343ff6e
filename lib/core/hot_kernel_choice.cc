#include "lib/core/hot_kernel_choice.h"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"

namespace cuscope::core {
namespace {

// A kernel's signature. References, so comparing two in the sort copies nothing.
auto Key(const HotKernelChoice& k) { return std::tie(k.name, k.device, k.shape.grid, k.shape.block); }

}  // namespace

std::vector<HotKernelChoice> SelectHotKernels(std::vector<HotKernelChoice> totals, size_t n) {
  // The map owns its keys (the names are moved into `merged` below).
  using KeyType = std::tuple<std::string, uint32_t, std::array<uint32_t, 3>, std::array<uint32_t, 3>>;
  absl::flat_hash_map<KeyType, size_t> index;
  std::vector<HotKernelChoice> merged;
  merged.reserve(totals.size());
  for (auto& t : totals) {
    auto [it, fresh] = index.try_emplace(KeyType(Key(t)), merged.size());
    if (fresh) {
      merged.push_back(std::move(t));
    } else {
      merged[it->second].total_ns += t.total_ns;
      merged[it->second].launches += t.launches;
    }
  }
  std::erase_if(merged, [](const HotKernelChoice& k) { return k.total_ns == 0; });
  std::sort(merged.begin(), merged.end(), [](const HotKernelChoice& a, const HotKernelChoice& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.launches != b.launches) return a.launches > b.launches;
    return Key(a) < Key(b);
  });
  if (merged.size() > n) merged.resize(n);
  return merged;
}

bool IsChosen(const std::vector<HotKernelChoice>& chosen, std::string_view name, const LaunchShape& shape) {
  return std::any_of(chosen.begin(), chosen.end(), [&](const HotKernelChoice& k) {
    return k.name == name && k.shape.grid == shape.grid && k.shape.block == shape.block;
  });
}

}  // namespace cuscope::core
