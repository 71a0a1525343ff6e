#include "lib/export/sqlite_exporter.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <functional>
#include <future>
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
#include "lib/analysis/top_down.h"
#include "lib/core/api_names.h"
#include "lib/core/kernel_names.h"
#include "lib/core/output_file.h"
#include "lib/core/version.h"
#include "lib/export/nvtx_range_pairing.h"
#include "lib/export/sqlite_database.h"
#include "lib/export/sqlite_schema.h"

namespace cuscope::exporter {
namespace {

using Cell = std::variant<std::monostate, int64_t, double, std::string_view>;
constexpr Cell kNull{};

Cell U64(uint64_t v) { return static_cast<int64_t>(v); }  // bits kept past INT64_MAX
Cell I64(int64_t v) { return v; }
Cell OrNull(uint64_t v) { return v == 0 ? kNull : U64(v); }
Cell Real(double v) { return v; }
Cell Text(std::string_view v) { return v; }

// "INSERT INTO table VALUES (?, ?, ...)" for `columns` columns.
std::string InsertSql(std::string_view table, int columns) {
  std::string sql = absl::StrCat("INSERT INTO ", std::string(table), " VALUES (");
  for (int i = 0; i < columns; ++i) absl::StrAppend(&sql, i ? ", ?" : "?");
  return sql + ")";
}

// An enum value's name without its prefix, lower case: WINDOW_KIND_METRICS -> "metrics".
std::string ShortName(const std::string& full, std::string_view prefix) {
  std::string name =
      full.size() > prefix.size() && full.compare(0, prefix.size(), prefix) == 0 ? full.substr(prefix.size()) : full;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// ENUM_CUDA_MEM_KIND numbers the kinds from pageable = 0 and puts unknown last.
int64_t NsysMemoryKind(v1::MemoryKind kind) {
  return kind >= v1::MEMORY_KIND_PAGEABLE && kind <= v1::MEMORY_KIND_MANAGED_STATIC ? kind - 1 : 7;
}

constexpr int64_t kEventClassRuntime = 0, kEventClassDriver = 1;
constexpr int64_t kNvtxMark = 34, kNvtxPushPopRange = 59, kNvtxStartEndRange = 60, kNvtxDomainCreate = 75;
constexpr int kKernelColumns = 34;

class TraceTables {
 public:
  TraceTables(const core::Trace& trace, const analysis::Timeline& timeline, SqliteDatabase& db,
              SqliteExportSummary& summary)
      : trace_(trace), dict_(trace.dict), timeline_(timeline), db_(db), summary_(summary) {
    const uint64_t session_start = trace.header.session().start_time_ns();
    origin_ = session_start != 0 ? session_start : timeline.span().begin;
    pid_ = trace.header.session().pid();
  }

  // `findings` is called once the trace's own tables are written (the analysis may still be running
  // on another thread until then).
  absl::Status WriteAll(const std::function<std::vector<analysis::Finding>()>& findings,
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

 private:
  // Nanoseconds from the session's start (negative before it), as nsys's tables count.
  Cell Time(uint64_t t) const { return I64(static_cast<int64_t>(t - origin_)); }
  Cell End(uint64_t start, uint64_t end) const { return Time(std::max(start, end)); }
  int64_t GlobalPid(uint32_t pid) const { return static_cast<int64_t>(pid & 0xffffffu) << 24; }
  Cell GlobalTid(uint32_t thread) const {
    if (thread == 0 || thread > dict_.thread_count()) return kNull;
    const v1::HostThread& t = dict_.thread(thread);
    return I64(GlobalPid(t.pid()) | static_cast<int64_t>(t.tid() & 0xffffffu));
  }
  // The StringIds id of `text`.
  int64_t Str(std::string_view text) {
    auto [it, added] = string_ids_.try_emplace(std::string(text), static_cast<int64_t>(strings_.size() + 1));
    if (added) strings_.push_back(&it->first);
    return it->second;
  }
  Cell StrOrNull(uint32_t string_id) { return string_id == 0 ? kNull : I64(Str(dict_.str(string_id))); }

  // Binds one row and runs it. The first failed row is kept and every later Insert does nothing:
  // WriteAll returns it after the step that met it, so the steps' loops carry no error checks.
  void Insert(SqliteStatement& statement, std::initializer_list<Cell> cells) {
    if (!first_error_.ok()) return;
    int index = 1;
    for (const Cell& cell : cells) {
      if (const auto* i = std::get_if<int64_t>(&cell)) {
        statement.Bind(index, *i);
      } else if (const auto* d = std::get_if<double>(&cell)) {
        statement.Bind(index, *d);
      } else if (const auto* t = std::get_if<std::string_view>(&cell)) {
        statement.Bind(index, *t);
      } else {
        statement.BindNull(index);
      }
      ++index;
    }
    first_error_ = statement.Run();
  }

  absl::StatusOr<std::unique_ptr<SqliteStatement>> Prepare(std::string_view table, int columns) {
    return db_.Prepare(InsertSql(table, columns));
  }

  absl::Status WriteDevices() {
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

  // StringIds ids of a signature's names: demangled, base, as recorded.
  const std::array<int64_t, 3>& KernelNames(uint32_t signature) {
    if (kernel_names_.empty()) kernel_names_.resize(dict_.signature_count() + 1, {0, 0, 0});
    std::array<int64_t, 3>& names = kernel_names_[signature];
    if (names[0] == 0) {
      const std::string& recorded = dict_.kernel_name(signature);
      names = {Str(core::KernelDisplayName(recorded, core::KernelNameStyle::kDemangled)),
               Str(core::KernelDisplayName(recorded, core::KernelNameStyle::kBase)), Str(recorded)};
    }
    return names;
  }

  absl::Status WriteKernels() {
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

  absl::Status WriteApiCalls() {
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

  // The device of a context, from the kernels' signatures and the copies (synchronization records
  // name only the context).
  uint32_t DeviceOfContext(uint32_t context) {
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

  absl::Status WriteCopies() {
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

  absl::Status WriteSyncs() {
    auto sync = Prepare("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 10);
    if (!sync.ok()) return sync.status();
    for (const core::SyncRecord& s : trace_.syncs) {
      ++summary_.synchronizations;
      Insert(**sync, {Time(s.start), End(s.start, s.end), I64(DeviceOfContext(s.context)), I64(s.context), kNull,
                      I64(s.stream), U64(s.correlation_id), I64(GlobalPid(pid_)), I64(s.type), I64(s.event)});
    }
    return absl::OkStatus();
  }

  // NVTX: a range is one row, its start and end records joined by id (an end read before its start
  // waits for it); a range ended on another thread is a start/end range with endGlobalTid, one
  // ended on its own thread a push/pop range; one never ended has no end. Domains are
  // NvtxDomainCreate rows, named by their text, numbered by domainId.
  absl::Status WriteNvtx() {
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

  absl::Status WriteMetricsAndCounters() {
    auto metrics = Prepare("CUSCOPE_KERNEL_METRICS", 13);
    if (!metrics.ok()) return metrics.status();
    for (const core::MetricRow& m : trace_.metrics) {
      const std::string mode = ShortName(v1::ReplayMode_Name(m.replay_mode), "REPLAY_MODE_");
      for (const auto& [metric, value] : m.values) {
        Insert(**metrics, {U64(m.correlation_id), I64(m.device), I64(Str(dict_.str(m.kernel_name))), I64(m.grid[0]),
                           I64(m.grid[1]), I64(m.grid[2]), I64(m.block[0]), I64(m.block[1]), I64(m.block[2]),
                           I64(m.pass_count), Text(mode), I64(Str(dict_.str(metric))), Real(value)});
      }
    }
    auto counters = Prepare("CUSCOPE_COUNTER_SAMPLES", 6);
    if (!counters.ok()) return counters.status();
    for (const core::CounterSample& c : trace_.counter_samples) {
      const std::string source = ShortName(v1::CounterSource_Name(c.source), "COUNTER_SOURCE_");
      Insert(**counters, {I64(c.device), Text(source), I64(Str(dict_.str(c.name))), Time(c.start), End(c.start, c.end),
                          Real(c.value)});
    }
    return absl::OkStatus();
  }

  absl::Status WriteWindowsAndTopDown() {
    auto windows = Prepare("CUSCOPE_CAPTURE_WINDOWS", 5);
    if (!windows.ok()) return windows.status();
    // A window arrives whole, or as an opening half (no end) and a later closing half (no start) of
    // the same kind, paired innermost first: a row per window, its end NULL when it was still open
    // at the end of the trace, its start NULL when its opening half is not in the trace.
    struct Row {
      v1::WindowKind kind;
      uint64_t start, end;
      std::string reason, end_reason;
    };
    std::vector<Row> rows;
    absl::flat_hash_map<int, std::vector<const v1::CaptureWindow*>> open;
    for (const v1::CaptureWindow& w : trace_.windows) {
      if (w.start_ns() != 0 && w.end_ns() != 0) {
        rows.push_back({w.kind(), w.start_ns(), w.end_ns(), w.reason(), w.reason()});
      } else if (w.start_ns() != 0) {
        open[w.kind()].push_back(&w);
      } else if (w.end_ns() != 0) {
        std::vector<const v1::CaptureWindow*>& halves = open[w.kind()];
        const v1::CaptureWindow* opening = halves.empty() ? nullptr : halves.back();
        if (!halves.empty()) halves.pop_back();
        rows.push_back({w.kind(), opening != nullptr ? opening->start_ns() : 0, w.end_ns(),
                        opening != nullptr ? opening->reason() : "", w.reason()});
      }
    }
    for (const auto& [kind, halves] : open) {
      for (const v1::CaptureWindow* w : halves) rows.push_back({w->kind(), w->start_ns(), 0, w->reason(), ""});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.start < b.start; });
    for (const Row& w : rows) {
      const std::string kind = ShortName(v1::WindowKind_Name(w.kind), "WINDOW_KIND_");
      Insert(**windows, {Text(kind), w.start != 0 ? Time(w.start) : kNull, w.end != 0 ? Time(w.end) : kNull,
                         Text(w.reason), w.end != 0 ? Text(w.end_reason) : kNull});
    }
    // The choices as analyze shows them: the hot kernels' launches and time measured inside the
    // timeline window (analysis/top_down.h), not the collector's running count.
    auto top_down = Prepare("CUSCOPE_TOP_DOWN", 13);
    if (!top_down.ok()) return top_down.status();
    const analysis::TopDownReport report = analysis::BuildTopDown(timeline_, {});
    for (const analysis::TopDownChoice& choice : report.choices) {
      int64_t rank = 0;
      for (const analysis::HotKernelEntry& k : choice.kernels) {
        Insert(**top_down, {Time(choice.time_ns), I64(rank++), I64(Str(k.name)), I64(k.device), I64(k.grid[0]),
                            I64(k.grid[1]), I64(k.grid[2]), I64(k.block[0]), I64(k.block[1]), I64(k.block[2]),
                            U64(k.window_ns), U64(k.launches), U64(choice.window_kernel_ns)});
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteStacks() {
    auto launches = Prepare("CUSCOPE_LAUNCH_STACKS", 2);
    if (!launches.ok()) return launches.status();
    absl::flat_hash_set<uint32_t> stacks;
    for (const core::LaunchStackRow& l : trace_.launch_stacks) {
      stacks.insert(l.stack);
      Insert(**launches, {U64(l.correlation_id), I64(l.stack)});
    }
    auto nodes = Prepare("CUSCOPE_GRAPH_NODES", 5);
    if (!nodes.ok()) return nodes.status();
    for (const core::GraphNodeRow& g : trace_.graph_nodes) {
      if (g.stack != 0) stacks.insert(g.stack);
      Insert(**nodes, {U64(g.node_id), OrNull(g.stack), OrNull(g.original_node_id),
                       g.created_ns != 0 ? Time(g.created_ns) : kNull, GlobalTid(g.thread)});
    }
    std::vector<uint32_t> ordered(stacks.begin(), stacks.end());
    std::sort(ordered.begin(), ordered.end());
    auto frames = Prepare("CUSCOPE_STACK_FRAMES", 8);
    if (!frames.ok()) return frames.status();
    for (uint32_t stack : ordered) {
      if (!dict_.has_stack(stack)) continue;
      int64_t depth = 0;
      for (uint32_t id : dict_.stack(stack).frames()) {
        if (!dict_.has_frame(id)) continue;
        const v1::StackFrame& f = dict_.frame(id);
        Insert(**frames,
               {I64(stack), I64(depth++), StrOrNull(f.module()), U64(f.module_offset()), StrOrNull(f.function()),
                U64(f.function_offset()), StrOrNull(f.source_file()), f.line() != 0 ? I64(f.line()) : kNull});
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteRequests() {
    auto scopes = Prepare("CUSCOPE_REQUEST_SCOPES", 7);
    if (!scopes.ok()) return scopes.status();
    auto members = Prepare("CUSCOPE_BATCH_REQUESTS", 2);
    if (!members.ok()) return members.status();
    int64_t id = 0;
    for (const core::RequestScopeRow& r : trace_.request_scopes) {
      ++id;
      Insert(**scopes, {I64(id), Time(r.start), End(r.start, r.end), GlobalTid(r.thread), U64(r.id), I64(r.batch),
                        StrOrNull(r.route)});
      for (uint64_t request : r.batch_requests) {
        Insert(**members, {I64(id), U64(request)});
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteMonitor() {
    auto intervals = Prepare("CUSCOPE_MONITOR_INTERVALS", 12);
    auto devices = Prepare("CUSCOPE_MONITOR_DEVICES", 17);
    auto kernels = Prepare("CUSCOPE_MONITOR_KERNELS", 12);
    auto requests = Prepare("CUSCOPE_MONITOR_REQUESTS", 8);
    for (auto* p : {&intervals, &devices, &kernels, &requests}) {
      if (!p->ok()) return p->status();
    }
    int64_t id = 0;
    for (const v1::MonitorInterval& m : trace_.monitor_intervals) {
      ++id;
      Insert(**intervals,
             {I64(id), Time(m.start_ns()), End(m.start_ns(), m.end_ns()), U64(m.launch_calls()), U64(m.sync_calls()),
              U64(m.sync_wait_ns()), U64(m.records_dropped_by_cupti()), U64(m.late_records()),
              I64(m.estimated() ? 1 : 0), m.estimated() ? U64(m.observed_ns()) : kNull,
              m.estimated() ? U64(m.sample_windows()) : kNull,
              m.estimated() && m.count_bound() >= 0 ? Real(m.count_bound()) : kNull});
      for (const v1::MonitorDevice& d : m.devices()) {
        std::array<Cell, core::kHostCauseCount> idle;
        idle.fill(kNull);
        for (int c = 0; c < core::kHostCauseCount && c < d.idle_by_cause_ns_size(); ++c) {
          idle[c] = U64(d.idle_by_cause_ns(c));
        }
        Insert(**devices, {I64(id), I64(d.device()), U64(d.busy_ns()), U64(d.idle_ns()), idle[0], idle[1], idle[2],
                           idle[3], idle[4], idle[5], U64(d.kernels()), U64(d.kernel_gpu_ns()), U64(d.memsets()),
                           U64(d.memset_bytes()), U64(d.memset_ns()), m.estimated() ? U64(d.observed_ns()) : kNull,
                           m.estimated() && d.busy_share_bound() >= 0 ? Real(d.busy_share_bound()) : kNull});
        int64_t rank = 0;
        for (const v1::MonitorKernel& k : d.top_kernels()) {
          Insert(**kernels, {I64(id), I64(d.device()), I64(rank++), StrOrNull(k.name()), I64(k.grid_x()),
                             I64(k.grid_y()), I64(k.grid_z()), I64(k.block_x()), I64(k.block_y()), I64(k.block_z()),
                             U64(k.launches()), U64(k.gpu_ns())});
        }
      }
      for (const v1::MonitorRouteRequests& r : m.requests()) {
        Insert(**requests,
               {I64(id), StrOrNull(r.route()), U64(r.requests()), Real(r.span().sum_seconds()),
                Real(r.gpu().sum_seconds()), Real(r.queue().sum_seconds()), Real(r.span_p50()), Real(r.span_p99())});
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteHostRecords() {
    auto memory = Prepare("CUSCOPE_MEMORY_OPERATIONS", 10);
    if (!memory.ok()) return memory.status();
    for (const core::MemoryOpRecord& m : trace_.memory_ops) {
      const std::string type = ShortName(v1::MemoryOperationType_Name(m.type), "MEMORY_OPERATION_");
      Insert(**memory, {Time(m.time), Text(type), I64(NsysMemoryKind(m.memory_kind)), U64(m.bytes), U64(m.address),
                        I64(m.device), I64(m.context), I64(m.stream), U64(m.correlation_id), I64(m.async)});
    }
    auto overheads = Prepare("CUSCOPE_OVERHEADS", 5);
    if (!overheads.ok()) return overheads.status();
    for (const core::OverheadRow& o : trace_.overheads) {
      Insert(**overheads,
             {Time(o.start), End(o.start, o.end), StrOrNull(o.kind), GlobalTid(o.thread), U64(o.correlation_id)});
    }
    return absl::OkStatus();
  }

  absl::Status WriteFindings(const std::vector<analysis::Finding>& findings) {
    auto head = Prepare("CUSCOPE_FINDINGS", 7);
    auto numbers = Prepare("CUSCOPE_FINDING_NUMBERS", 4);
    auto spans = Prepare("CUSCOPE_FINDING_SPANS", 4);
    auto offenders = Prepare("CUSCOPE_FINDING_OFFENDERS", 5);
    for (auto* p : {&head, &numbers, &spans, &offenders}) {
      if (!p->ok()) return p->status();
    }
    int64_t id = 0;
    for (const analysis::Finding& f : findings) {
      ++id;
      ++summary_.findings;
      Insert(**head, {I64(id), I64(id), Text(f.rule_id), Text(analysis::SeverityName(f.severity)), Text(f.headline),
                      Text(f.recommendation), U64(f.recoverable_ns)});
      for (const analysis::Number& n : f.numbers) {
        Insert(**numbers, {I64(id), Text(n.key), Real(n.value), Text(n.unit)});
      }
      for (const analysis::Span& s : f.spans) {
        Insert(**spans, {I64(id), Time(s.begin), End(s.begin, s.end), Text(s.label)});
      }
      for (const analysis::Offender& o : f.offenders) {
        Insert(**offenders, {I64(id), Text(o.kind), Text(o.name), U64(o.count), U64(o.time_ns)});
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteSession(const std::string& source_name) {
    const v1::Session& s = trace_.header.session();
    auto meta = Prepare("META_DATA_EXPORT", 2);
    if (!meta.ok()) return meta.status();
    std::vector<std::pair<std::string, std::string>> rows = {
        {"EXPORT_SCHEMA_VERSION", std::string(kNsysSchemaVersion)},
        {"EXPORT_PRODUCT_VERSION", absl::StrCat("cuscope ", core::kVersion)},
        {"CUSCOPE_SOURCE_TRACE", source_name},
        {"CUSCOPE_SESSION_START_CUPTI_NS", absl::StrCat(origin_)},
        {"CUSCOPE_SESSION_ENTRY", s.entry()},
        {"CUSCOPE_PID", absl::StrCat(pid_)},
        {"CUSCOPE_HOST", s.host()},
        {"CUSCOPE_COMMAND_LINE", absl::StrJoin(s.command_line(), " ")},
        {"CUSCOPE_RANK", absl::StrCat(s.rank())},
        {"CUSCOPE_WORLD_SIZE", absl::StrCat(s.world_size())},
        {"CUSCOPE_CHUNKS", absl::StrCat(trace_.chunks)},
        {"CUSCOPE_TRUNCATED_BYTES", absl::StrCat(trace_.tail_bytes_dropped)},
    };
    if (trace_.corruption.has_value())
      rows.emplace_back("CUSCOPE_CORRUPTION", std::string(trace_.corruption->message()));
    if (trace_.stats.has_value()) {
      rows.emplace_back("CUSCOPE_RECORDS_WRITTEN", absl::StrCat(trace_.stats->records_written()));
      rows.emplace_back("CUSCOPE_RECORDS_DROPPED_BY_CUPTI", absl::StrCat(trace_.stats->records_dropped_by_cupti()));
    }
    for (const auto& [name, value] : rows) {
      Insert(**meta, {Text(name), Text(value)});
    }
    auto start = Prepare("TARGET_INFO_SESSION_START_TIME", 3);
    if (!start.ok()) return start.status();
    if (s.clock_ref_realtime_ns() != 0 && s.clock_ref_cupti_ns() != 0) {
      const int64_t utc =
          static_cast<int64_t>(s.clock_ref_realtime_ns()) - static_cast<int64_t>(s.clock_ref_cupti_ns() - origin_);
      const absl::Time when = absl::FromUnixNanos(utc);
      const std::string utc_text = absl::FormatTime("%Y-%m-%dT%H:%M:%E9SZ", when, absl::UTCTimeZone());
      const std::string local_text = absl::FormatTime("%Y-%m-%dT%H:%M:%E9S%Ez", when, absl::LocalTimeZone());
      Insert(**start, {I64(utc), Text(utc_text), Text(local_text)});
    }
    auto details = Prepare("ANALYSIS_DETAILS", 4);
    if (!details.ok()) return details.status();
    const intervals::Interval span = timeline_.span();
    const int64_t begin = std::min<int64_t>(0, static_cast<int64_t>(span.begin - origin_));
    const int64_t stop = span.end > origin_ ? static_cast<int64_t>(span.end - origin_) : 0;
    Insert(**details, {I64(0), I64(stop - begin), I64(begin), I64(stop)});
    auto processes = Prepare("PROCESSES", 3);
    if (!processes.ok()) return processes.status();
    std::string name;
    if (s.command_line_size() > 0) {
      name = s.command_line(0);
      if (const size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    }
    Insert(**processes, {I64(GlobalPid(pid_)), I64(pid_), Text(name)});
    return absl::OkStatus();
  }

  absl::Status WriteStrings() {
    auto strings = Prepare("StringIds", 2);
    if (!strings.ok()) return strings.status();
    int64_t id = 0;
    for (const std::string* s : strings_) {
      Insert(**strings, {I64(++id), Text(*s)});
    }
    summary_.strings = strings_.size();
    return absl::OkStatus();
  }

  const core::Trace& trace_;
  const core::Dictionary& dict_;
  const analysis::Timeline& timeline_;
  SqliteDatabase& db_;
  SqliteExportSummary& summary_;
  uint64_t origin_ = 0;
  uint32_t pid_ = 0;
  absl::node_hash_map<std::string, int64_t> string_ids_;  // a node map: its keys do not move
  std::vector<const std::string*> strings_;               // by id - 1
  std::vector<std::array<int64_t, 3>> kernel_names_;
  absl::flat_hash_map<uint32_t, uint32_t> context_devices_;
  absl::Status first_error_;  // of the first row that could not be inserted
};

}  // namespace

namespace {

// Writes the tables into the scratch file and puts it at its path.
absl::StatusOr<SqliteExportSummary> WriteInto(core::ScratchFile& scratch, const core::Trace& trace,
                                              const analysis::Timeline& timeline,
                                              const std::function<std::vector<analysis::Finding>()>& findings,
                                              const std::string& source_name, const std::string& output) {
  SqliteExportSummary summary;
  {
    absl::StatusOr<std::unique_ptr<SqliteDatabase>> db = SqliteDatabase::Create(scratch.scratch_path());
    if (!db.ok()) return db.status();
    // Whatever a trace holds, the database stays within the bound every view of a trace keeps
    // (core::TraceOutputBound): a trace made to amplify stops with one error, not a full disk.
    // The tables themselves take a page each before any row: 1 MiB more for them.
    const uint64_t bound = core::TraceOutputBound(trace.bytes_read);
    if (auto st = (*db)->LimitBytes(bound > UINT64_MAX - (1u << 20) ? UINT64_MAX : bound + (1u << 20)); !st.ok()) {
      return st;
    }
    {
      TraceTables tables(trace, timeline, **db, summary);
      if (absl::Status st = tables.WriteAll(findings, source_name); !st.ok()) {
        return absl::Status(st.code(), absl::StrCat(output, ": ", st.message()));
      }
    }
    if (absl::Status st = (*db)->Close(); !st.ok()) return st;
  }
  struct stat file;
  if (::stat(scratch.scratch_path().c_str(), &file) == 0) summary.bytes_written = static_cast<uint64_t>(file.st_size);
  if (absl::Status st = scratch.Publish(); !st.ok()) return st;
  return summary;
}

}  // namespace

absl::StatusOr<SqliteExportSummary> WriteSqlite(const core::Trace& trace,
                                                const std::vector<analysis::Finding>& findings,
                                                const std::string& source_name, const std::string& output,
                                                bool overwrite) {
  absl::StatusOr<std::unique_ptr<core::ScratchFile>> scratch = core::ScratchFile::CreateBeside(output, overwrite);
  if (!scratch.ok()) return scratch.status();
  const analysis::Timeline timeline = analysis::Timeline::Build(trace);
  return WriteInto(**scratch, trace, timeline, [&findings] { return findings; }, source_name, output);
}

absl::StatusOr<SqliteExportSummary> ExportToSqlite(const std::string& trace_path, const std::string& output,
                                                   const SqliteExportOptions& options) {
  // The output's name is checked before the trace is read and analyzed.
  absl::StatusOr<std::unique_ptr<core::ScratchFile>> scratch =
      core::ScratchFile::CreateBeside(output, options.overwrite);
  if (!scratch.ok()) return scratch.status();
  absl::StatusOr<core::Trace> trace = core::LoadTrace(trace_path);
  if (!trace.ok()) return trace.status();
  if (options.add_source_lines) options.add_source_lines(trace->dict);
  const analysis::Timeline timeline = analysis::Timeline::Build(*trace);
  // The analysis reads the trace and the timeline as the tables' writer does (neither changes
  // them): it runs beside the writing, which it used to precede (1.6 s of 5.5 s on a million
  // launches).
  std::future<std::vector<analysis::Finding>> findings;
  if (options.findings) {
    findings = std::async(std::launch::async, [&timeline] {
      analysis::AnalyzeOptions analyze;
      analyze.include_tables = false;
      return analysis::Analyze(timeline, analyze).findings;
    });
  }
  return WriteInto(
      **scratch, *trace, timeline,
      [&findings] { return findings.valid() ? findings.get() : std::vector<analysis::Finding>(); }, trace_path,
      output);
}

}  // namespace cuscope::exporter
