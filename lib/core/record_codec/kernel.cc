#include "lib/core/record_codec/kernel.h"

#include "absl/strings/str_cat.h"

namespace cuscope::core {

KernelSignatureKey KernelSignatureKeyOf(const KernelConfig& c, uint32_t name) {
  return KernelSignatureKey{name, c.device, c.context, c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,
                            c.registers_per_thread, c.static_shared_memory, c.dynamic_shared_memory,
                            c.local_memory_per_thread, static_cast<int32_t>(c.launch_type), c.cluster_x, c.cluster_y,
                            c.cluster_z, c.shared_memory_executed, c.device_launched};
}

void EncodeKernelSignature(const KernelSignatureKey& key, uint32_t id, v1::KernelSignature* out) {
  out->set_id(id);
  out->set_name(key.name);
  out->set_device(key.device);
  out->set_context(key.context);
  out->set_grid_x(key.grid_x);
  out->set_grid_y(key.grid_y);
  out->set_grid_z(key.grid_z);
  out->set_block_x(key.block_x);
  out->set_block_y(key.block_y);
  out->set_block_z(key.block_z);
  out->set_registers_per_thread(key.registers);
  out->set_static_shared_memory(key.static_smem);
  out->set_dynamic_shared_memory(key.dynamic_smem);
  out->set_local_memory_per_thread(key.local_mem);
  out->set_launch_type(static_cast<v1::LaunchType>(key.launch_type));
  out->set_cluster_x(key.cluster_x);
  out->set_cluster_y(key.cluster_y);
  out->set_cluster_z(key.cluster_z);
  out->set_shared_memory_executed(key.smem_executed);
  out->set_device_launched(key.device_launched);
}

absl::Status CheckKernelSignature(const v1::KernelSignature& s) {
  if (!DeviceOk(s.device())) return BadDevice(absl::StrCat("kernel signature ", s.id()), s.device());
  if (s.registers_per_thread() > kMaxRegistersPerThreadField) {
    return Corrupt(absl::StrCat("kernel signature ", s.id(), " has ", s.registers_per_thread(),
                                " registers per thread (CUPTI's field holds at most ", kMaxRegistersPerThreadField, ")"));
  }
  if (s.static_shared_memory() < 0 || s.dynamic_shared_memory() < 0) {
    return Corrupt(absl::StrCat("kernel signature ", s.id(), " has negative shared memory"));
  }
  if (s.grid_x() < 0 || s.grid_y() < 0 || s.grid_z() < 0 || s.block_x() < 0 || s.block_y() < 0 || s.block_z() < 0) {
    return Corrupt(absl::StrCat("kernel signature ", s.id(), " has a negative grid or block dimension"));
  }
  return absl::OkStatus();
}

void KernelColumnEncoder::Append(const KernelActivity& a, uint32_t signature, uint64_t base_time_ns,
                                 v1::KernelColumns* out) {
  const uint64_t row = spans_.Append(a.start, a.end, a.correlation_id, base_time_ns, out);
  out->add_signature(signature);
  out->add_stream(a.stream);
  AppendOptional(out->mutable_graph_id(), row, a.graph_id);
  AppendOptional(out->mutable_graph_node_id(), row, a.graph_node_id);
  AppendOptional(out->mutable_flags(), row, a.flags);
  // A lead of 0 reads back as "not recorded": a launch is never queued at the very nanosecond its
  // kernel starts.
  AppendOptional(out->mutable_queued_lead(), row,
                 a.queued == 0 ? int64_t{0} : static_cast<int64_t>(a.start - a.queued));
}

absl::Status DecodeKernelColumns(const v1::KernelColumns& k, const ChunkContext& chunk, std::vector<KernelRow>* out) {
  SpanColumnDecoder spans(k, chunk.base_time_ns);
  const int n = spans.rows();
  if (!spans.LengthsOk() || k.signature_size() != n || k.stream_size() != n || !OptionalColumnOk(k.graph_id(), n) ||
      !OptionalColumnOk(k.graph_node_id(), n) || !OptionalColumnOk(k.flags(), n) ||
      !OptionalColumnOk(k.queued_lead(), n)) {
    return Corrupt(absl::StrCat("kernel columns of chunk ", chunk.sequence, " differ in length"));
  }
  out->resize(n);
  for (int i = 0; i < n; ++i) {
    KernelRow& r = (*out)[i];
    spans.Read(i, &r);
    r.signature = k.signature(i);
    if (!chunk.dict.has_signature(r.signature)) {
      return Corrupt(absl::StrCat("kernel row uses undefined signature ", r.signature));
    }
    r.stream = k.stream(i);
    r.graph_id = OptionalAt(k.graph_id(), i);
    r.graph_node_id = OptionalAt(k.graph_node_id(), i);
    r.flags = OptionalAt(k.flags(), i);
    const int64_t lead = OptionalAt(k.queued_lead(), i);
    r.queued = lead == 0 ? 0 : r.start - static_cast<uint64_t>(lead);
  }
  return absl::OkStatus();
}

}  // namespace cuscope::core
