// NCCL as a trace shows it: its kernels by name, and its API calls by the NVTX ranges NCCL emits
// (domain "NCCL", one range per call, with an extended payload from NCCL 2.16 on). Pure.
//
// Kernel names, as CUPTI reports them (mangled) or demangled:
//   NCCL 2.19 and later  ncclDevKernel_<Coll>[_<Op>_<type>]_<ALGO>_<PROTO>, ncclDevKernel_SendRecv,
//                        ncclDevKernel_Generic; ncclSymkDevKernel_<Coll>_... (2.28), ncclSymDevKernel_
//                        (2.27). A kernel is named after the specialization NCCL compiled; the work
//                        inside may be another function (a group of collectives runs in one kernel
//                        named after the first; ops and types are folded), so only the collective
//                        is taken from it, the rest kept as the kernel's variant.
//   NCCL 2.8 to 2.18     ncclKernel_<Coll>_<ALGO>_<PROTO>_<Op>_<ctype>: the algorithm is the one run.
//   NCCL 2.7 and before  nccl<Coll><Algo><Proto>Kernel_<op>_<type>.
// Any other name starting with "nccl" is communication of an unknown collective.
//
// NVTX payloads (nvtx_payload_schemas.h of NCCL): a static schema per call, id 2^24 + n; from 2.25
// every layout starts with the communicator's hash (the same on every rank), then the call's bytes
// (size_t: per rank; AllGather's send, ReduceScatter's receive size), then the root, peer or
// reduction (int). Before 2.25 the hash is absent. The size tells the layouts apart.
#ifndef CUSCOPE_LIB_ANALYSIS_NCCL_H_
#define CUSCOPE_LIB_ANALYSIS_NCCL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cuscope::analysis {

enum class Collective : uint8_t {
  kUnknown,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kSendRecv,  // ncclSend, ncclRecv, and all-to-all as NCCL runs it (grouped sends and receives)
  kAllToAll,
  kGather,
  kScatter,
};
inline constexpr int kCollectiveCount = 10;
// "AllReduce", "AllGather", ...; "unknown".
std::string_view CollectiveName(Collective c);

struct NcclKernelName {
  bool nccl = false;  // a communication kernel
  Collective collective = Collective::kUnknown;
  // As the name says ("" when it does not): see above for how far to trust them per NCCL version.
  std::string algorithm;  // RING, TREE, COLLNET_DIRECT, NVLS, PAT, ...
  std::string protocol;   // LL, LL128, SIMPLE
  std::string reduction;  // Sum, Prod, MinMax, ...
  std::string data_type;  // f32, bf16, float, __nv_bfloat16, ...
  // NCCL 2.19 and later: the name is the kernel's specialization, not necessarily the work's.
  bool specialization = false;
};

// `name` mangled (as CUPTI reports it) or demangled.
NcclKernelName ParseNcclKernelName(std::string_view name);

// An NCCL API call's name as its NVTX range gives it ("ncclAllReduce", "ncclSend", ...): the
// collective; nullopt for calls that are no collective (ncclGroupStart, ncclCommInitRank, ...).
std::optional<Collective> CollectiveOfCall(std::string_view api);

// What an NCCL call's extended payload says.
struct NcclCallPayload {
  std::optional<uint64_t> communicator;  // NCCL 2.25 and later
  uint64_t bytes = 0;                    // per rank, as NCCL counts them
  std::optional<int32_t> reduction;      // ncclRedOp_t: 0 sum, 1 prod, 2 max, 3 min, 4 avg
  std::optional<int32_t> root;           // Broadcast, Reduce
  std::optional<int32_t> peer;           // Send, Recv
};
// Decodes the payload of a call of `collective` (`api` tells Send from Recv) from its schema id and
// bytes; nullopt when the schema is not one of NCCL's or the size is none of its layouts.
std::optional<NcclCallPayload> DecodeNcclPayload(std::string_view api, uint64_t schema_id, std::string_view data);

// nccl-tests' convention: bus bandwidth = algorithm bandwidth x this factor for `ranks` ranks
// (AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll, Gather, Scatter (n-1)/n; the others 1),
// where the algorithm bandwidth is the bytes the call moves per rank (times the ranks for AllGather,
// ReduceScatter and AllToAll, whose counts are per rank) over its time. 0 for an unknown collective
// or fewer than one rank.
double BusBandwidthFactor(Collective c, int ranks);
// Whether NCCL counts a call's bytes as one rank's share (AllGather, ReduceScatter, AllToAll,
// Gather, Scatter): the bytes moved then need the number of ranks.
bool BytesArePerRank(Collective c);
// The bytes that algorithm bandwidth divides: `call_bytes` (NCCL's per-rank count) times the ranks
// where BytesArePerRank.
double AlgorithmBytes(Collective c, uint64_t call_bytes, int ranks);

}  // namespace cuscope::analysis

#endif  // CUSCOPE_LIB_ANALYSIS_NCCL_H_
