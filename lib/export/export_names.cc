#include "lib/export/export_names.h"

#include <array>
#include <string>

#include "absl/strings/str_cat.h"

namespace cuscope::exporter {
namespace {

constexpr std::array<std::string_view, static_cast<size_t>(Fixed::kCount)> kFixedNames = {
    "kernel",
    "replayed_kernel",
    "memcpy",
    "memset",
    "cuda_runtime",
    "cuda_driver",
    "nvtx",
    "cupti_overhead",
    "capture_window",
    "metrics_window",
    "finding",
    "correlation id",
    "grid",
    "block",
    "registers per thread",
    "static shared memory",
    "dynamic shared memory",
    "device",
    "stream",
    "graph id",
    "graph node id",
    "replayed for metrics",
    "mangled name",
    "bytes",
    "copy kind",
    "source memory",
    "destination memory",
    "async",
    "throughput GB/s",
    "value",
    "memory kind",
    "return code",
    "domain",
    "unterminated",
    "reason",
    "rule",
    "severity",
    "headline",
    "recommendation",
    "recoverable ns",
    "rank",
    "launched from",
    "Memset",
    "(unnamed range)",
    "timeline capture",
    "metrics collection (kernel replay)",
};

// Every Fixed has its text: a missing one would leave the last entries empty.
static_assert(!kFixedNames.back().empty(), "kFixedNames and Fixed differ");

// Copy kinds have small values; anything else reads as unknown (0).
size_t CopyIndex(v1::CopyKind kind) { return kind >= 0 && kind <= v1::COPY_KIND_PTOP ? static_cast<size_t>(kind) : 0; }

}  // namespace

Name F(Fixed f) { return Keyed(NameKind::kFixed, static_cast<uint64_t>(f), kFixedNames[static_cast<size_t>(f)]); }

std::string_view CopyKindName(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD: return "HtoD";
    case v1::COPY_KIND_DTOH: return "DtoH";
    case v1::COPY_KIND_HTOA: return "HtoA";
    case v1::COPY_KIND_ATOH: return "AtoH";
    case v1::COPY_KIND_ATOA: return "AtoA";
    case v1::COPY_KIND_ATOD: return "AtoD";
    case v1::COPY_KIND_DTOA: return "DtoA";
    case v1::COPY_KIND_DTOD: return "DtoD";
    case v1::COPY_KIND_HTOH: return "HtoH";
    case v1::COPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

std::string_view MemoryKindName(v1::MemoryKind kind) {
  switch (kind) {
    case v1::MEMORY_KIND_PAGEABLE: return "pageable";
    case v1::MEMORY_KIND_PINNED: return "pinned";
    case v1::MEMORY_KIND_DEVICE: return "device";
    case v1::MEMORY_KIND_ARRAY: return "array";
    case v1::MEMORY_KIND_MANAGED: return "managed";
    case v1::MEMORY_KIND_DEVICE_STATIC: return "device static";
    case v1::MEMORY_KIND_MANAGED_STATIC: return "managed static";
    default: return "unknown";
  }
}

Name MemoryKind(v1::MemoryKind kind) {
  return Keyed(NameKind::kMemoryKind, static_cast<uint64_t>(kind) & 0xff, MemoryKindName(kind));
}

Name CopyKind(v1::CopyKind kind) {
  const size_t index = CopyIndex(kind);
  return Keyed(NameKind::kCopy, 100 + index, CopyKindName(static_cast<v1::CopyKind>(index)));
}

Name CopyName(v1::CopyKind kind) {
  static const std::array<std::string, v1::COPY_KIND_PTOP + 1> kNames = [] {
    std::array<std::string, v1::COPY_KIND_PTOP + 1> names;
    for (size_t i = 0; i < names.size(); ++i) {
      names[i] = absl::StrCat("Memcpy ", AV(CopyKindName(static_cast<v1::CopyKind>(i))));
    }
    return names;
  }();
  const size_t index = CopyIndex(kind);
  return Keyed(NameKind::kCopy, index, kNames[index]);
}

}  // namespace cuscope::exporter
