// Communication in one trace: NCCL's kernels (nccl.h) with what each did, joined to the NCCL calls
// that asked for them (their NVTX ranges and payloads), and per device how much of the
// communication ran while other kernels computed and how much was exposed: GPU time when only
// communication ran, the part on the critical path.
//
// A kernel is joined to its calls through the call that launched it (its correlation id): the
// innermost NCCL range around that launch on the launching thread is the call; a launch inside the
// ncclGroupEnd that closes the outermost group runs every collective called in that group on that
// thread (their bytes summed; the group's first kernel takes them all).
// Without NCCL's NVTX ranges (nvtx not recorded, NCCL_NVTX_DISABLE, NCCL before 2.16) kernels have
// no bytes or communicator, and say so.
#ifndef CUSCOPE_LIB_ANALYSIS_COMMUNICATION_H_
#define CUSCOPE_LIB_ANALYSIS_COMMUNICATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/analysis/interval_names.h"
#include "lib/analysis/nccl.h"
#include "lib/analysis/timeline.h"

namespace cuscope::analysis {

// An NCCL API call, from its NVTX range in the "NCCL" domain.
struct NcclCall {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t thread = 0;
  std::string api;  // "ncclAllReduce"
  Collective collective = Collective::kUnknown;
  std::optional<NcclCallPayload> payload;
  bool ran_kernel = false;  // joined to a kernel
};

// One NCCL kernel.
struct CommunicationOp {
  uint32_t kernel = 0;  // index into trace.kernels
  uint32_t device = 0;
  uint32_t stream = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  Collective collective = Collective::kUnknown;
  // From the calls joined to it (none: unknown).
  std::optional<uint64_t> communicator;
  std::optional<uint64_t> bytes;
  uint32_t calls = 0;
  uint64_t exposed_ns = 0;  // of its time, with no other kernel of its device computing
};

struct DeviceCommunication {
  uint32_t device = 0;
  uint64_t communication_ns = 0;  // union of the device's NCCL kernels
  uint64_t compute_ns = 0;        // union of its other kernels
  uint64_t overlapped_ns = 0;     // communication while another kernel computed
  uint64_t exposed_ns() const { return communication_ns - overlapped_ns; }
  uint64_t kernel_ns = 0;  // union of all its kernels
  IntervalSet compute;     // its kernels that are not NCCL's, as a set
};

struct Communication {
  std::vector<CommunicationOp> ops;  // by start
  std::vector<NcclCall> calls;       // by start
  // The devices that ran NCCL kernels (none: the trace has no communication kernels).
  std::vector<DeviceCommunication> devices;
  bool has_payloads = false;  // some call carried NCCL's payload
};

Communication BuildCommunication(const Timeline& timeline);

// The NCCL NVTX ranges of a trace with their payloads, by start (what BuildCommunication joins).
std::vector<NcclCall> NcclCalls(const core::Trace& trace);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_COMMUNICATION_H_
