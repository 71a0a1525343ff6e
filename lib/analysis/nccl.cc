#include "lib/analysis/nccl.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cuscope::analysis {
namespace {

struct CollectiveToken {
  std::string_view token;
  Collective collective;
};
// Longest first where one is a prefix of another (ReduceScatter before Reduce).
constexpr std::array<CollectiveToken, 11> kCollectiveTokens = {{
    {"AllReduce", Collective::kAllReduce},
    {"AllGatherV", Collective::kAllGather},
    {"AllGather", Collective::kAllGather},
    {"ReduceScatter", Collective::kReduceScatter},
    {"Reduce", Collective::kReduce},
    {"Broadcast", Collective::kBroadcast},
    {"SendRecv", Collective::kSendRecv},
    {"AlltoAll", Collective::kAllToAll},
    {"AllToAll", Collective::kAllToAll},
    {"Gather", Collective::kGather},
    {"Scatter", Collective::kScatter},
}};

std::optional<Collective> CollectiveToken(std::string_view token) {
  for (const auto& t : kCollectiveTokens) {
    if (token == t.token) return t.collective;
  }
  return std::nullopt;
}

// abseil's split and join take absl::string_view, which this abseil does not make of std::string_view.
std::vector<std::string_view> Split(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  size_t from = 0;
  for (;;) {
    const size_t at = s.find(separator, from);
    out.push_back(s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return out;
    from = at + 1;
  }
}

std::string Join(const std::vector<std::string_view>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (i > from) out.push_back('_');
    out.append(parts[i]);
  }
  return out;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = absl::ascii_toupper(static_cast<unsigned char>(c));
  return out;
}

bool IsProtocol(std::string_view t) { return t == "LL" || t == "LL128" || t == "SIMPLE"; }

bool IsReduction(std::string_view t) {
  for (std::string_view r : {"Sum", "Prod", "MinMax", "Min", "Max", "PreMulSum", "SumPostDiv", "sum", "avg"}) {
    if (t == r) return true;
  }
  return false;
}

bool IsDataType(std::string_view t) {
  for (std::string_view d : {"i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2"}) {
    if (t == d) return true;
  }
  return false;
}

// The identifier a kernel is named by: the mangled name's first source name (its length prefixed),
// or the demangled name up to its parameter list.
std::string_view KernelIdentifier(std::string_view name) {
  if (name.starts_with("_Z")) {
    size_t i = 2;
    if (i < name.size() && name[i] == 'L') ++i;  // internal linkage
    size_t length = 0;
    const size_t digits = i;
    while (i < name.size() && absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) {
      length = length * 10 + static_cast<size_t>(name[i] - '0');
      if (length > name.size()) return {};
      ++i;
    }
    if (i == digits || i + length > name.size()) return {};
    return name.substr(i, length);
  }
  const size_t paren = name.find('(');
  std::string_view id = name.substr(0, paren);
  // "void ncclDevKernel_...(...)": the return type before it.
  if (const size_t space = id.rfind(' '); space != std::string_view::npos) id = id.substr(space + 1);
  return id;
}

// ncclDevKernel_AllReduce_Sum_f32_RING_LL; ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_bf16.
void ParseSpecialization(std::string_view rest, bool symmetric, NcclKernelName& out) {
  const std::vector<std::string_view> tokens = Split(rest, '_');
  if (auto c = CollectiveToken(tokens[0])) out.collective = *c;
  out.specialization = true;
  size_t end = tokens.size();
  if (!symmetric && end > 1 && IsProtocol(tokens[end - 1])) out.protocol = std::string(tokens[--end]);
  if (symmetric && end > 1 && IsDataType(tokens[end - 1])) out.data_type = std::string(tokens[--end]);
  if (symmetric && end > 1 && IsReduction(tokens[end - 1])) out.reduction = std::string(tokens[--end]);
  size_t i = 1;
  if (!symmetric && i < end && IsReduction(tokens[i])) out.reduction = std::string(tokens[i++]);
  if (!symmetric && i < end && IsDataType(tokens[i])) out.data_type = std::string(tokens[i++]);
  if (i < end) out.algorithm = Join(tokens, i, end);
}

// ncclKernel_AllReduce_RING_LL_Sum_float; ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t.
void ParseOlder(std::string_view rest, NcclKernelName& out) {
  const std::vector<std::string_view> tokens = Split(rest, '_');
  if (auto c = CollectiveToken(tokens[0])) out.collective = *c;
  size_t i = 1;
  while (i < tokens.size() && !IsProtocol(tokens[i])) ++i;
  if (i == tokens.size()) return;  // no protocol: not this form
  out.algorithm = Join(tokens, 1, i);
  out.protocol = std::string(tokens[i++]);
  if (i < tokens.size()) out.reduction = std::string(tokens[i++]);
  if (i < tokens.size()) out.data_type = Join(tokens, i, tokens.size());
}

// ncclAllReduceRingLLKernel_sum_f32 (NCCL 2.7 and before).
void ParseOldest(std::string_view id, NcclKernelName& out) {
  std::string_view body = id.substr(4);  // after "nccl"
  const size_t kernel = body.find("Kernel");
  if (kernel == std::string_view::npos) return;
  std::string_view head = body.substr(0, kernel);
  for (const auto& t : kCollectiveTokens) {
    if (!head.starts_with(t.token)) continue;
    out.collective = t.collective;
    head.remove_prefix(t.token.size());
    break;
  }
  if (out.collective == Collective::kUnknown) return;
  for (std::string_view proto : {"LL128", "LL", "Simple"}) {
    if (head.ends_with(proto)) {
      out.protocol = Upper(proto);
      head.remove_suffix(proto.size());
      break;
    }
  }
  out.algorithm = Upper(head);
  std::vector<std::string_view> tail = Split(body.substr(kernel + 6), '_');
  tail.erase(std::remove(tail.begin(), tail.end(), std::string_view()), tail.end());
  if (!tail.empty()) out.reduction = std::string(tail[0]);
  if (tail.size() > 1) out.data_type = std::string(tail[1]);
}

template <typename T>
T Read(std::string_view data, size_t offset) {
  T value;
  std::memcpy(&value, data.data() + offset, sizeof(T));
  return value;
}

// NCCL's static payload schema ids (NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START + NVTX_SID_*).
constexpr uint64_t kStaticSchemaStart = uint64_t{1} << 24;

}  // namespace

std::string_view CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "AllReduce";
    case Collective::kAllGather: return "AllGather";
    case Collective::kReduceScatter: return "ReduceScatter";
    case Collective::kBroadcast: return "Broadcast";
    case Collective::kReduce: return "Reduce";
    case Collective::kSendRecv: return "SendRecv";
    case Collective::kAllToAll: return "AllToAll";
    case Collective::kGather: return "Gather";
    case Collective::kScatter: return "Scatter";
    case Collective::kUnknown: break;
  }
  return "unknown";
}

NcclKernelName ParseNcclKernelName(std::string_view name) {
  NcclKernelName out;
  const std::string_view id = KernelIdentifier(name);
  if (!id.starts_with("nccl")) return out;
  out.nccl = true;
  for (std::string_view prefix : {"ncclDevKernel_", "ncclSymkDevKernel_", "ncclSymDevKernel_"}) {
    if (id.starts_with(prefix)) {
      ParseSpecialization(id.substr(prefix.size()), prefix != "ncclDevKernel_", out);
      return out;
    }
  }
  if (id.starts_with("ncclKernel_")) {
    ParseOlder(id.substr(11), out);
    return out;
  }
  ParseOldest(id, out);
  return out;
}

std::optional<Collective> CollectiveOfCall(std::string_view api) {
  if (!api.starts_with("nccl")) return std::nullopt;
  std::string_view rest = api.substr(4);
  if (rest == "Send" || rest == "Recv") return Collective::kSendRecv;
  if (rest == "Bcast") return Collective::kBroadcast;
  if (rest == "AllToAll") return Collective::kAllToAll;
  return CollectiveToken(rest);
}

std::optional<NcclCallPayload> DecodeNcclPayload(std::string_view api, uint64_t schema_id, std::string_view data) {
  const std::optional<Collective> c = CollectiveOfCall(api);
  if (!c || schema_id < kStaticSchemaStart || schema_id >= kStaticSchemaStart + 64) return std::nullopt;
  const bool bytes_only = *c == Collective::kAllGather || *c == Collective::kAllToAll || *c == Collective::kGather ||
                          *c == Collective::kScatter;
  // Layouts: before 2.25 {size_t bytes[, int extra...]}; from 2.25 {uint64 comm, size_t bytes[, int...]}.
  bool with_communicator = false;
  if (data.size() == 8) {
    if (!bytes_only) return std::nullopt;
  } else if (data.size() == 16) {
    with_communicator = bytes_only;  // {comm, bytes} or {bytes, int (+ padding or a second int)}
  } else if (data.size() >= 24 && data.size() <= 64) {
    with_communicator = true;
  } else {
    return std::nullopt;
  }
  NcclCallPayload p;
  size_t at = 0;
  if (with_communicator) {
    p.communicator = Read<uint64_t>(data, 0);
    at = 8;
  }
  p.bytes = Read<uint64_t>(data, at);
  at += 8;
  const bool has_int = at + 4 <= data.size() && !bytes_only;
  if (has_int) {
    const int32_t first = Read<int32_t>(data, at);
    if (*c == Collective::kAllReduce || *c == Collective::kReduceScatter) {
      p.reduction = first;
    } else if (*c == Collective::kBroadcast) {
      p.root = first;
    } else if (*c == Collective::kReduce) {
      p.root = first;
      if (at + 8 <= data.size()) p.reduction = Read<int32_t>(data, at + 4);
    } else if (*c == Collective::kSendRecv) {
      p.peer = first;
    }
  }
  return p;
}

double BusBandwidthFactor(Collective c, int ranks) {
  if (ranks < 1) return 0;
  const double n = ranks;
  switch (c) {
    case Collective::kAllReduce: return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1;
    case Collective::kUnknown: break;
  }
  return 0;
}

bool BytesArePerRank(Collective c) {
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter: return true;
    default: return false;
  }
}

double AlgorithmBytes(Collective c, uint64_t call_bytes, int ranks) {
  return static_cast<double>(call_bytes) * (BytesArePerRank(c) ? std::max(ranks, 1) : 1);
}

}  // namespace cuscope::analysis
