#include "lib/core/record_codec/top_down.h"

namespace cuscope::core {

void EncodeTopDownSelection(uint64_t time_ns, uint64_t window_kernel_ns, v1::TopDownSelection* out) {
  out->set_time_ns(time_ns);
  out->set_window_kernel_ns(window_kernel_ns);
}

void EncodeHotKernel(const HotKernelChoice& k, uint32_t name, v1::HotKernel* out) {
  out->set_name(name);
  out->set_device(k.device);
  out->set_grid_x(k.shape.grid[0]);
  out->set_grid_y(k.shape.grid[1]);
  out->set_grid_z(k.shape.grid[2]);
  out->set_block_x(k.shape.block[0]);
  out->set_block_y(k.shape.block[1]);
  out->set_block_z(k.shape.block[2]);
  out->set_total_ns(k.total_ns);
  out->set_launches(k.launches);
}

absl::Status CheckTopDownSelection(const v1::TopDownSelection& selection, const ChunkContext& chunk) {
  for (const v1::HotKernel& hot : selection.kernels()) {
    if (!StringOk(chunk.dict, hot.name())) return Corrupt("top-down selection uses an undefined string");
    if (!DeviceOk(hot.device())) return BadDevice("top-down selection", hot.device());
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
