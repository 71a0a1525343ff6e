#include "lib/core/record_codec/counter_series.h"

#include "absl/strings/str_cat.h"
#include "lib/core/record_codec/columns.h"

namespace cuscope::core {

void EncodeCounterSeries(uint32_t device, v1::CounterSource source, uint32_t name,
                         const std::vector<CounterPoint>& points, uint64_t base_time_ns, v1::CounterSeries* out) {
  out->set_device(device);
  out->set_source(source);
  out->set_name(name);
  bool any_duration = false;
  for (const CounterPoint& p : points) any_duration = any_duration || p.end > p.start;
  DeltaEncoder start;
  start.Reset(base_time_ns);
  for (const CounterPoint& p : points) {
    out->add_start_delta(start.Next(p.start));
    if (any_duration) out->add_duration(SpanDuration(p.start, p.end));
    out->add_value(p.value);
  }
}

absl::Status DecodeCounterSeries(const v1::CounterSeries& series, const ChunkContext& chunk,
                                 std::vector<CounterSample>* out) {
  const int n = series.start_delta_size();
  if (series.value_size() != n || !OptionalColumnOk(series.duration(), n)) {
    return Corrupt(absl::StrCat("counter columns of chunk ", chunk.sequence, " differ in length"));
  }
  if (!StringOk(chunk.dict, series.name())) return Corrupt("counter series uses an undefined string");
  if (!DeviceOk(series.device())) return BadDevice("counter series", series.device());
  DeltaDecoder start(chunk.base_time_ns);
  for (int i = 0; i < n; ++i) {
    CounterSample& r = out->emplace_back();
    r.start = start.Next(series.start_delta(i));
    r.end = r.start + OptionalAt(series.duration(), i);
    r.device = series.device();
    r.source = series.source();
    r.name = series.name();
    r.value = series.value(i);
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
