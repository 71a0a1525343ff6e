// Kernel records in a trace: a launch configuration is interned once as a KernelSignature, and
// each launch is a row of KernelColumns naming its signature.
//
// Encode: KernelActivity -> KernelSignatureKey (the fields a signature is interned by) ->
// v1::KernelSignature, and KernelActivity -> a row of v1::KernelColumns.
// Decode: v1::KernelColumns -> KernelRow, and the checks of a signature's launch configuration
// (trace_reader.h); readers look signatures up in the Dictionary as they are stored.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_KERNEL_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_KERNEL_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "cuscope/v1/trace.pb.h"
#include "lib/core/record_codec/columns.h"
#include "lib/core/record_codec/decode_checks.h"
#include "lib/core/records.h"

namespace cuscope::core {

// A launch configuration with its name interned: launches with equal keys share a signature.
struct KernelSignatureKey {
  uint32_t name;  // string id
  uint32_t device, context;
  int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
  uint32_t registers;
  int32_t static_smem, dynamic_smem;
  uint32_t local_mem;
  int32_t launch_type;
  uint32_t cluster_x, cluster_y, cluster_z, smem_executed;
  bool device_launched;

  template <typename H>
  friend H AbslHashValue(H h, const KernelSignatureKey& k) {
    return H::combine(std::move(h), k.name, k.device, k.context, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,
                      k.block_z, k.registers, k.static_smem, k.dynamic_smem, k.local_mem, k.launch_type, k.cluster_x,
                      k.cluster_y, k.cluster_z, k.smem_executed, k.device_launched);
  }
  friend bool operator==(const KernelSignatureKey&, const KernelSignatureKey&) = default;
};

// The key of `config`, whose name has string id `name`.
KernelSignatureKey KernelSignatureKeyOf(const KernelConfig& config, uint32_t name);

// Writes the signature `id` of `key`.
void EncodeKernelSignature(const KernelSignatureKey& key, uint32_t id, v1::KernelSignature* out);

// A signature's launch configuration is within what CUPTI can report (trace_reader.h); the
// DataLoss otherwise names the signature and the field.
absl::Status CheckKernelSignature(const v1::KernelSignature& signature);

// Appends launches to one chunk's kernel columns: starts and correlation ids delta-encoded,
// graph ids and flags as optional columns. Reset before each new chunk.
class KernelColumnEncoder {
 public:
  // `signature` is the launch's interned signature id; `base_time_ns` the chunk's base time.
  void Append(const KernelActivity& launch, uint32_t signature, uint64_t base_time_ns, v1::KernelColumns* out);
  void Reset() { spans_.Reset(); }

 private:
  SpanColumnEncoder spans_;
};

// Decodes a chunk's kernel columns into `out` (replacing its contents). DataLoss when the
// columns differ in length or a row names a signature `chunk.dict` does not define.
absl::Status DecodeKernelColumns(const v1::KernelColumns& columns, const ChunkContext& chunk,
                                 std::vector<KernelRow>* out);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_KERNEL_H_
