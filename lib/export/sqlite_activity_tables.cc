// The trace's activity as nsys's tables: devices, kernels, API calls, copies and memsets,
// synchronization, NVTX; and the transaction that writes every table (WriteAll).
#include "lib/export/sqlite_trace_tables.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "lib/analysis/analyzer.h"
#include "lib/analysis/timeline.h"
#include "lib/analysis/top_down_report.h"
#include "lib/core/api_names.h"
#include "lib/core/kernel_names.h"
#include "lib/core/output_file.h"
#include "lib/core/version.h"
#include "lib/export/nvtx_range_pairing.h"
#include "lib/export/sqlite_database.h"
#include "lib/export/sqlite_schema.h"

namespace cuscope::exporter::sqlite_tables {

absl::Status TraceTables::WriteAll(const std::function<std::vector<analysis::Finding>()>& findings,
                                   const std::string& source_name) {
  if (auto st = db_.Execute("BEGIN"); !st.ok()) return st;
  if (auto st = db_.Execute(SqliteSchema()); !st.ok()) return st;
  for (auto step :
       {&TraceTables::WriteDevices, &TraceTables::WriteKernels, &TraceTables::WriteApiCalls,
        &TraceTables::WriteCopies, &TraceTables::WriteSyncs, &TraceTables::WriteNvtx,
        &TraceTables::WriteMetricsAndCounters, &TraceTables::WriteWindowsAndTopDown, &TraceTables::WriteStacks,
        &TraceTables::WriteRequests, &TraceTables::WriteMonitor, &TraceTables::WriteHostRecords}) {
    if (auto st = (this->*step)(); !st.ok()) return st;
    if (!first_error_.ok()) return first_error_;
  }
  if (auto st = WriteFindings(findings()); !st.ok()) return st;
  if (auto st = WriteSession(source_name); !st.ok()) return st;
  if (auto st = WriteStrings(); !st.ok()) return st;
  if (!first_error_.ok()) return first_error_;
  return db_.Execute("COMMIT");
}

absl::Status TraceTables::WriteDevices() {
  auto gpu = Prepare("TARGET_INFO_GPU", 41);
  if (!gpu.ok()) return gpu.status();
  for (const v1::Device& d : trace_.header.devices()) {
    const int64_t major = d.compute_capability_major(), minor = d.compute_capability_minor();
    Insert(**gpu, {I64(0),
                   I64(d.id()),
                   Text(d.name()),
                   kNull,
                   I64(1),
                   U64(d.l2_cache_bytes()),
                   U64(d.global_memory_bytes()),
                   U64(d.peak_dram_bytes_per_second()),
                   I64(int64_t{d.sm_clock_khz()} * 1000),
                   I64(d.sm_count()),
                   kNull,
                   Text(d.uuid()),
                   kNull,
                   kNull,
                   I64(d.id()),
                   kNull,
                   kNull,
                   kNull,
                   kNull,
                   kNull,
                   kNull,
                   I64(d.max_registers_per_block()),
                   U64(d.max_shared_memory_per_block()),
                   kNull,
                   U64(d.shared_memory_per_sm()),
                   I64(d.registers_per_sm()),
                   I64(d.warp_size()),
                   kNull,
                   I64(d.max_warps_per_sm()),
                   I64(d.max_blocks_per_sm()),
                   I64(d.max_threads_per_block()),
                   kNull,
                   kNull,
                   kNull,
                   kNull,
                   kNull,
                   kNull,
                   I64(major),
                   I64(minor),
                   I64(major),
                   I64(minor)});
  }
  return absl::OkStatus();
}

const std::array<int64_t, 3>& TraceTables::KernelNames(uint32_t signature) {
  if (kernel_names_.empty()) kernel_names_.resize(dict_.signature_count() + 1, {0, 0, 0});
  std::array<int64_t, 3>& names = kernel_names_[signature];
  if (names[0] == 0) {
    const std::string& recorded = dict_.kernel_name(signature);
    names = {Str(core::KernelDisplayName(recorded, core::KernelNameStyle::kDemangled)),
             Str(core::KernelDisplayName(recorded, core::KernelNameStyle::kBase)), Str(recorded)};
  }
  return names;
}

absl::Status TraceTables::WriteKernels() {
  auto on_timeline = Prepare("CUPTI_ACTIVITY_KIND_KERNEL", kKernelColumns);
  if (!on_timeline.ok()) return on_timeline.status();
  auto replays = Prepare("CUSCOPE_KERNEL_REPLAYS", kKernelColumns);
  if (!replays.ok()) return replays.status();
  for (const core::KernelRow& k : trace_.kernels) {
    const v1::KernelSignature& s = dict_.signature(k.signature);
    const std::array<int64_t, 3>& names = KernelNames(k.signature);
    const bool replayed = timeline_.Replayed(k);
    ++(replayed ? summary_.replayed_kernels : summary_.kernels);
    Insert(replayed ? **replays : **on_timeline, {Time(k.start),
                                                  End(k.start, k.end),
                                                  I64(s.device()),
                                                  I64(s.context()),
                                                  kNull,
                                                  I64(k.stream),
                                                  U64(k.correlation_id),
                                                  I64(GlobalPid(pid_)),
                                                  I64(names[0]),
                                                  I64(names[1]),
                                                  I64(names[2]),
                                                  I64(s.launch_type()),
                                                  kNull,
                                                  I64(s.registers_per_thread()),
                                                  I64(s.grid_x()),
                                                  I64(s.grid_y()),
                                                  I64(s.grid_z()),
                                                  I64(s.block_x()),
                                                  I64(s.block_y()),
                                                  I64(s.block_z()),
                                                  I64(s.static_shared_memory()),
                                                  I64(s.dynamic_shared_memory()),
                                                  I64(s.local_memory_per_thread()),
                                                  I64(0),
                                                  I64(0),
                                                  I64(s.shared_memory_executed()),
                                                  OrNull(k.graph_node_id),
                                                  kNull,
                                                  OrNull(k.graph_id),
                                                  I64(s.cluster_x()),
                                                  I64(s.cluster_y()),
                                                  I64(s.cluster_z()),
                                                  k.queued != 0 ? Time(k.queued) : kNull,
                                                  I64(k.signature)});
  }
  // The configurations the launches name: a reader that wants each launch's shape joins these
  // few rows instead of reading the same columns on every launch.
  auto signatures = Prepare("CUSCOPE_KERNEL_SIGNATURES", 22);
  if (!signatures.ok()) return signatures.status();
  for (uint32_t id = 1; id <= dict_.signature_count(); ++id) {
    const v1::KernelSignature& s = dict_.signature(id);
    const std::array<int64_t, 3>& names = KernelNames(id);
    Insert(**signatures, {I64(id),
                          I64(names[2]),
                          I64(names[1]),
                          I64(names[0]),
                          I64(s.device()),
                          I64(s.context()),
                          I64(s.grid_x()),
                          I64(s.grid_y()),
                          I64(s.grid_z()),
                          I64(s.block_x()),
                          I64(s.block_y()),
                          I64(s.block_z()),
                          I64(s.registers_per_thread()),
                          I64(s.static_shared_memory()),
                          I64(s.dynamic_shared_memory()),
                          I64(s.local_memory_per_thread()),
                          I64(s.shared_memory_executed()),
                          I64(s.launch_type()),
                          I64(s.cluster_x()),
                          I64(s.cluster_y()),
                          I64(s.cluster_z()),
                          I64(s.device_launched())});
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteApiCalls() {
  auto runtime = Prepare("CUPTI_ACTIVITY_KIND_RUNTIME", 8);
  if (!runtime.ok()) return runtime.status();
  std::vector<int64_t> name_ids(dict_.function_count() + 1, 0);
  for (const core::ApiCallRow& a : trace_.api_calls) {
    const bool known = a.function > 0 && a.function <= dict_.function_count();
    int64_t& name = name_ids[known ? a.function : 0];
    if (name == 0) name = Str(known ? core::DisplayApiName(dict_.function_name(a.function)) : "(unknown API)");
    const bool driver = known && dict_.function(a.function).domain() == v1::API_DOMAIN_DRIVER;
    ++summary_.api_calls;
    Insert(**runtime, {Time(a.start), End(a.start, a.end), I64(driver ? kEventClassDriver : kEventClassRuntime),
                       GlobalTid(a.thread), U64(a.correlation_id), I64(name), I64(a.return_code), kNull});
  }
  return absl::OkStatus();
}

uint32_t TraceTables::DeviceOfContext(uint32_t context) {
  if (context_devices_.empty()) {
    for (uint32_t sig = 1; sig <= dict_.signature_count(); ++sig) {
      context_devices_.try_emplace(dict_.signature(sig).context(), dict_.signature(sig).device());
    }
    for (const core::MemcpyRecord& m : trace_.memcpys) context_devices_.try_emplace(m.context, m.device);
    for (const core::MemsetRecord& m : trace_.memsets) context_devices_.try_emplace(m.context, m.device);
  }
  auto it = context_devices_.find(context);
  return it != context_devices_.end() ? it->second : 0;
}

absl::Status TraceTables::WriteCopies() {
  auto memcpy = Prepare("CUPTI_ACTIVITY_KIND_MEMCPY", 22);
  if (!memcpy.ok()) return memcpy.status();
  for (const core::MemcpyRecord& m : trace_.memcpys) {
    ++summary_.memcpys;
    Insert(**memcpy, {Time(m.start),
                      End(m.start, m.end),
                      I64(m.device),
                      I64(m.context),
                      kNull,
                      I64(m.stream),
                      U64(m.correlation_id),
                      I64(GlobalPid(pid_)),
                      U64(m.bytes),
                      I64(m.copy_kind),
                      kNull,
                      I64(NsysMemoryKind(m.src_kind)),
                      I64(NsysMemoryKind(m.dst_kind)),
                      kNull,
                      kNull,
                      kNull,
                      kNull,
                      kNull,
                      OrNull(m.graph_node_id),
                      kNull,
                      OrNull(m.graph_id),
                      I64(m.async)});
  }
  auto memset = Prepare("CUPTI_ACTIVITY_KIND_MEMSET", 14);
  if (!memset.ok()) return memset.status();
  for (const core::MemsetRecord& m : trace_.memsets) {
    ++summary_.memsets;
    Insert(**memset, {Time(m.start), End(m.start, m.end), I64(m.device), I64(m.context), kNull, I64(m.stream),
                      U64(m.correlation_id), I64(GlobalPid(pid_)), I64(m.value), U64(m.bytes),
                      OrNull(m.graph_node_id), I64(NsysMemoryKind(m.memory_kind)), OrNull(m.graph_id), I64(m.async)});
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteSyncs() {
  auto sync = Prepare("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 10);
  if (!sync.ok()) return sync.status();
  for (const core::SyncRecord& s : trace_.syncs) {
    ++summary_.synchronizations;
    Insert(**sync, {Time(s.start), End(s.start, s.end), I64(DeviceOfContext(s.context)), I64(s.context), kNull,
                    I64(s.stream), U64(s.correlation_id), I64(GlobalPid(pid_)), I64(s.type), I64(s.event)});
  }
  return absl::OkStatus();
}

absl::Status TraceTables::WriteNvtx() {
  auto nvtx = Prepare("NVTX_EVENTS", 20);
  if (!nvtx.ok()) return nvtx.status();
  absl::flat_hash_map<uint64_t, const core::NvtxPayloadRecord*> payloads;
  for (const core::NvtxPayloadRecord& p : trace_.nvtx_payloads) payloads.try_emplace(p.id, &p);
  absl::flat_hash_set<uint32_t> domains;
  auto row = [&](const core::NvtxRow& start, std::optional<const core::NvtxRow*> end) {
    const bool mark = start.kind == v1::NVTX_KIND_MARK;
    const bool other_thread = end.has_value() && (*end)->thread != start.thread;
    const int64_t type = mark ? kNvtxMark : (other_thread ? kNvtxStartEndRange : kNvtxPushPopRange);
    if (start.domain != 0) domains.insert(start.domain);
    Cell u64 = kNull, i64 = kNull, real = kNull;
    if (auto p = payloads.find(start.id); start.id != 0 && p != payloads.end()) {
      switch (p->second->kind) {
        case v1::NVTX_PAYLOAD_KIND_UINT64:
          u64 = U64(p->second->bits);
          break;
        case v1::NVTX_PAYLOAD_KIND_INT64:
          i64 = U64(p->second->bits);
          break;
        case v1::NVTX_PAYLOAD_KIND_DOUBLE: {
          double d;
          std::memcpy(&d, &p->second->bits, sizeof d);
          real = Real(d);
          break;
        }
        default:
          break;
      }
    }
    const std::string_view text = start.name != 0 ? std::string_view(dict_.str(start.name)) : std::string_view();
    ++(mark ? summary_.nvtx_marks : summary_.nvtx_ranges);
    // The name through textId (StringIds, once), as nsys stores a registered string: a long name
    // named by many ranges is not copied into every row.
    Insert(**nvtx, {Time(start.time),
                    end.has_value() ? End(start.time, (*end)->time) : kNull,
                    I64(type),
                    mark ? kNull : U64(start.id),
                    kNull,
                    kNull,
                    kNull,
                    GlobalTid(start.thread),
                    other_thread ? GlobalTid((*end)->thread) : kNull,
                    start.name != 0 ? I64(Str(text)) : kNull,
                    start.domain != 0 ? I64(Str(dict_.str(start.domain))) : kNull,
                    u64,
                    i64,
                    real,
                    kNull,
                    kNull,
                    kNull,
                    kNull,
                    kNull,
                    kNull});
  };
  NvtxRangePairing pairing;
  for (const core::NvtxRow& n : trace_.nvtx) {
    if (n.kind == v1::NVTX_KIND_MARK) {
      row(n, std::nullopt);
    } else if (std::optional<NvtxRangePairing::Range> r = pairing.Add(n)) {
      row(r->start, &r->end);
    }
  }
  const std::vector<core::NvtxRow> unterminated = pairing.Unclosed();
  for (const core::NvtxRow& start : unterminated) row(start, std::nullopt);
  if (!unterminated.empty()) {
    summary_.warnings.push_back(absl::StrCat(unterminated.size(), " NVTX range(s) never closed: no end"));
  }
  if (pairing.orphan_ends() > 0) {
    summary_.warnings.push_back(
        absl::StrCat(pairing.orphan_ends(), " NVTX range end(s) without their start in the trace: left out"));
  }
  for (uint32_t domain : domains) {
    const std::string& name = dict_.str(domain);
    Insert(**nvtx, {Time(origin_), kNull,          I64(kNvtxDomainCreate),
                    kNull,         kNull,          kNull,
                    Text(name),    kNull,          kNull,
                    kNull,         I64(Str(name)), kNull,
                    kNull,         kNull,          kNull,
                    kNull,         kNull,          kNull,
                    kNull,         kNull});
  }
  return absl::OkStatus();
}

}  // namespace cuscope::exporter::sqlite_tables
