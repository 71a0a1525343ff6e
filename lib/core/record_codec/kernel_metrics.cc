#include "lib/core/record_codec/kernel_metrics.h"

namespace cuscope::core {

void EncodeKernelMetrics(const MetricRow& r, v1::KernelMetrics* out) {
  out->set_grid_x(r.grid[0]);
  out->set_grid_y(r.grid[1]);
  out->set_grid_z(r.grid[2]);
  out->set_block_x(r.block[0]);
  out->set_block_y(r.block[1]);
  out->set_block_z(r.block[2]);
  out->set_correlation_id(r.correlation_id);
  out->set_device(r.device);
  out->set_kernel_name(r.kernel_name);
  out->set_pass_count(r.pass_count);
  out->set_replay_mode(r.replay_mode);
  for (const auto& [name, value] : r.values) {
    v1::MetricValue* v = out->add_values();
    v->set_name(name);
    v->set_value(value);
  }
}

absl::Status DecodeKernelMetrics(const v1::KernelMetrics& m, const ChunkContext& chunk, MetricRow* out) {
  out->correlation_id = m.correlation_id();
  out->device = m.device();
  out->pass_count = m.pass_count();
  out->replay_mode = m.replay_mode();
  out->kernel_name = m.kernel_name();
  out->grid = {m.grid_x(), m.grid_y(), m.grid_z()};
  out->block = {m.block_x(), m.block_y(), m.block_z()};
  if (!StringOk(chunk.dict, out->kernel_name)) return Corrupt("metric row uses an undefined string");
  if (!DeviceOk(out->device)) return BadDevice("metric row", out->device);
  for (const v1::MetricValue& v : m.values()) {
    if (!StringOk(chunk.dict, v.name())) return Corrupt("metric row uses an undefined string");
    out->values.emplace_back(v.name(), v.value());
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
