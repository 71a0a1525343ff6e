// The SQLite export's writer of one trace's tables (sqlite_exporter.h): nsys's tables and
// cuscope's own, rows bound through prepared statements inside one transaction. Internal to
// lib/export: the class here, the activity tables (devices, kernels, API calls, copies,
// synchronization, NVTX) in sqlite_activity_tables.cc, cuscope's own tables (metrics and
// counters, windows and the top-down, stacks, requests, monitor intervals, host records,
// findings, the session and the strings) in sqlite_cuscope_tables.cc.
#ifndef CUSCOPE_LIB_EXPORT_SQLITE_TRACE_TABLES_H_
#define CUSCOPE_LIB_EXPORT_SQLITE_TRACE_TABLES_H_

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/finding.h"
#include "lib/analysis/timeline.h"
#include "lib/core/trace.h"
#include "lib/export/sqlite_database.h"
#include "lib/export/sqlite_exporter.h"

namespace cuscope::exporter::sqlite_tables {

using Cell = std::variant<std::monostate, int64_t, double, std::string_view>;
constexpr Cell kNull{};

inline Cell U64(uint64_t v) { return static_cast<int64_t>(v); }  // bits kept past INT64_MAX
inline Cell I64(int64_t v) { return v; }
inline Cell OrNull(uint64_t v) { return v == 0 ? kNull : U64(v); }
inline Cell Real(double v) { return v; }
inline Cell Text(std::string_view v) { return v; }

// "INSERT INTO table VALUES (?, ?, ...)" for `columns` columns.
inline std::string InsertSql(std::string_view table, int columns) {
  std::string sql = absl::StrCat("INSERT INTO ", std::string(table), " VALUES (");
  for (int i = 0; i < columns; ++i) absl::StrAppend(&sql, i ? ", ?" : "?");
  return sql + ")";
}

// An enum value's name without its prefix, lower case: WINDOW_KIND_METRICS -> "metrics".
inline std::string ShortName(const std::string& full, std::string_view prefix) {
  std::string name =
      full.size() > prefix.size() && full.compare(0, prefix.size(), prefix) == 0 ? full.substr(prefix.size()) : full;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// ENUM_CUDA_MEM_KIND numbers the kinds from pageable = 0 and puts unknown last.
inline int64_t NsysMemoryKind(v1::MemoryKind kind) {
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
                        const std::string& source_name);

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

  absl::Status WriteDevices();

  // StringIds ids of a signature's names: demangled, base, as recorded.
  const std::array<int64_t, 3>& KernelNames(uint32_t signature);

  absl::Status WriteKernels();

  absl::Status WriteApiCalls();

  // The device of a context, from the kernels' signatures and the copies (synchronization records
  // name only the context).
  uint32_t DeviceOfContext(uint32_t context);

  absl::Status WriteCopies();

  absl::Status WriteSyncs();

  // NVTX: a range is one row, its start and end records joined by id (an end read before its start
  // waits for it); a range ended on another thread is a start/end range with endGlobalTid, one
  // ended on its own thread a push/pop range; one never ended has no end. Domains are
  // NvtxDomainCreate rows, named by their text, numbered by domainId.
  absl::Status WriteNvtx();

  absl::Status WriteMetricsAndCounters();

  absl::Status WriteWindowsAndTopDown();

  absl::Status WriteStacks();

  absl::Status WriteRequests();

  absl::Status WriteMonitor();

  absl::Status WriteHostRecords();

  absl::Status WriteFindings(const std::vector<analysis::Finding>& findings);

  absl::Status WriteSession(const std::string& source_name);

  absl::Status WriteStrings();

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

}  // namespace cuscope::exporter::sqlite_tables

#endif  // CUSCOPE_LIB_EXPORT_SQLITE_TRACE_TABLES_H_
