#include "lib/export/utilization.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cuscope::exporter {

uint64_t Utilization::AdaptiveBucket(uint64_t span_ns) {
  // The width kTargetBuckets buckets need, rounded up.
  const uint64_t need = span_ns / kTargetBuckets + (span_ns % kTargetBuckets != 0 ? 1 : 0);
  const uint64_t steps[] = {1, 2, 5};
  for (uint64_t scale = 1000; scale <= UINT64_MAX / 10; scale *= 10) {
    for (uint64_t step : steps) {
      if (step * scale >= need) return step * scale;
    }
  }
  return UINT64_MAX / 2;
}

absl::StatusOr<Utilization> Utilization::Create(uint64_t first_ns, uint64_t last_ns, uint64_t bucket_ns) {
  last_ns = std::max(first_ns, last_ns);
  const uint64_t span = last_ns - first_ns;
  if (bucket_ns == 0) bucket_ns = AdaptiveBucket(span);
  const uint64_t buckets = span / bucket_ns + 1;
  if (buckets > kMaxBuckets) {
    return absl::InvalidArgumentError(absl::StrCat("a utilization bucket of ", bucket_ns, " ns needs ", buckets,
                                                   " buckets for this trace; the limit is ", kMaxBuckets));
  }
  return Utilization(first_ns, last_ns, bucket_ns, buckets);
}

void Utilization::Add(uint32_t device, std::vector<std::pair<uint64_t, uint64_t>>* intervals) {
  if (intervals->empty()) return;
  std::vector<uint64_t>& busy = busy_[device];
  if (busy.empty()) busy.assign(buckets_, 0);
  if (!std::is_sorted(intervals->begin(), intervals->end())) std::sort(intervals->begin(), intervals->end());
  auto add = [&](uint64_t start, uint64_t end) {
    start = std::max(start, first_);
    end = std::min(end, last_);
    while (start < end) {
      const uint64_t index = (start - first_) / bucket_ns_;
      const uint64_t bucket_end = first_ + (index + 1) * bucket_ns_;
      const uint64_t piece_end = std::min(end, bucket_end);
      busy[index] += piece_end - start;
      start = piece_end;
    }
  };
  uint64_t run_start = (*intervals)[0].first, run_end = (*intervals)[0].second;
  for (const auto& [start, end] : *intervals) {
    if (start > run_end) {
      add(run_start, run_end);
      run_start = start;
    }
    run_end = std::max(run_end, end);
  }
  add(run_start, run_end);
}

std::vector<Utilization::Sample> Utilization::Samples(uint32_t device) const {
  std::vector<Sample> samples;
  auto it = busy_.find(device);
  if (it == busy_.end()) return samples;
  const std::vector<uint64_t>& busy = it->second;
  for (uint64_t i = 0; i < buckets_; ++i) {
    const uint64_t start = first_ + i * bucket_ns_;
    if (start >= last_ && i > 0) break;
    // The last bucket ends with the trace, so a short one is not read as idle.
    const uint64_t width = std::min(bucket_ns_, last_ - start);
    const double percent =
        width == 0 ? 0.0 : 100.0 * static_cast<double>(std::min(busy[i], width)) / static_cast<double>(width);
    if (samples.empty() || samples.back().percent != percent) samples.push_back({start, percent});
  }
  // The counter holds its last value until the next sample: bring it back to 0 at the end.
  if (samples.back().percent != 0) {
    if (samples.back().time == last_) {
      samples.back().percent = 0;
    } else {
      samples.push_back({last_, 0.0});
    }
  }
  return samples;
}

std::vector<uint32_t> Utilization::devices() const {
  std::vector<uint32_t> out;
  for (const auto& [device, busy] : busy_) out.push_back(device);
  return out;
}

}  // namespace cuscope::exporter
