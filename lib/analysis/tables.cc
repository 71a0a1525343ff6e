#include "lib/analysis/tables.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuscope::analysis {
namespace {

struct Summary {
  uint64_t count = 0, total = 0, min = 0, max = 0;
  double avg = 0, median = 0, stddev = 0;
};

// Sample statistics, as nsys prints them (median of an even count: mean of the two middle values;
// standard deviation with n-1).
Summary Summarize(std::vector<uint64_t>& values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  for (uint64_t v : values) s.total += v;
  s.avg = static_cast<double>(s.total) / static_cast<double>(s.count);
  // Selection, not a full sort: linear time on the millions of launches of one kernel.
  const size_t mid = s.count / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = static_cast<double>(values[mid]);
  if (s.count % 2) {
    s.median = upper;
  } else {
    const double lower = static_cast<double>(*std::max_element(values.begin(), values.begin() + mid));
    s.median = (lower + upper) / 2.0;
  }
  if (s.count > 1) {
    double sum_sq = 0;
    for (uint64_t v : values) sum_sq += (static_cast<double>(v) - s.avg) * (static_cast<double>(v) - s.avg);
    s.stddev = std::sqrt(sum_sq / static_cast<double>(s.count - 1));
  }
  return s;
}

std::string Dec(double v) { return absl::StrFormat("%.1f", v); }

const std::vector<Column> kTimeColumns = {
    {"Time (%)", ColumnType::kPercent},  {"Total Time (ns)", ColumnType::kInteger},
    {"Instances", ColumnType::kInteger}, {"Avg (ns)", ColumnType::kDecimal},
    {"Med (ns)", ColumnType::kDecimal},  {"Min (ns)", ColumnType::kInteger},
    {"Max (ns)", ColumnType::kInteger},  {"StdDev (ns)", ColumnType::kDecimal}};

// Rows of a time summary, largest total first.
struct Group {
  std::string name;
  std::vector<uint64_t> values;
};

void AddTimeRows(std::vector<Group>& groups, Table& table) {
  uint64_t grand_total = 0;
  std::vector<std::pair<Summary, std::string>> rows;
  for (Group& g : groups) {
    if (g.values.empty()) continue;
    Summary s = Summarize(g.values);
    std::vector<uint64_t>().swap(g.values);
    grand_total += s.total;
    rows.emplace_back(s, std::move(g.name));
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.first.total != b.first.total ? a.first.total > b.first.total : a.second < b.second;
  });
  for (auto& [s, name] : rows) {
    const double pct = grand_total ? 100.0 * static_cast<double>(s.total) / static_cast<double>(grand_total) : 0;
    table.rows.push_back({Dec(pct), absl::StrCat(s.total), absl::StrCat(s.count), Dec(s.avg), Dec(s.median),
                          absl::StrCat(s.min), absl::StrCat(s.max), Dec(s.stddev), std::move(name)});
  }
}

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

std::string MemoryOperationName(v1::CopyKind kind) {
  switch (kind) {
    case v1::COPY_KIND_HTOD: return "[CUDA memcpy Host-to-Device]";
    case v1::COPY_KIND_DTOH: return "[CUDA memcpy Device-to-Host]";
    case v1::COPY_KIND_DTOD: return "[CUDA memcpy Device-to-Device]";
    case v1::COPY_KIND_HTOH: return "[CUDA memcpy Host-to-Host]";
    case v1::COPY_KIND_PTOP: return "[CUDA memcpy Peer-to-Peer]";
    case v1::COPY_KIND_HTOA: return "[CUDA memcpy Host-to-Array]";
    case v1::COPY_KIND_ATOH: return "[CUDA memcpy Array-to-Host]";
    case v1::COPY_KIND_ATOA: return "[CUDA memcpy Array-to-Array]";
    case v1::COPY_KIND_ATOD: return "[CUDA memcpy Array-to-Device]";
    case v1::COPY_KIND_DTOA: return "[CUDA memcpy Device-to-Array]";
    default: return "[CUDA memcpy Unknown]";
  }
}

// Memory operations grouped by kind: one group per copy direction, one for memsets.
std::vector<Group> MemoryGroups(const Timeline& timeline, bool sizes) {
  const core::Trace& trace = timeline.trace();
  std::vector<Group> groups(v1::CopyKind_ARRAYSIZE + 1);
  for (int k = 0; k < v1::CopyKind_ARRAYSIZE; ++k) groups[k].name = MemoryOperationName(static_cast<v1::CopyKind>(k));
  groups.back().name = "[CUDA memset]";
  for (const core::MemcpyRecord& m : trace.memcpys) {
    const int k = v1::CopyKind_IsValid(m.copy_kind) ? m.copy_kind : 0;
    groups[k].values.push_back(sizes ? m.bytes : Duration(m.start, m.end));
  }
  for (const core::MemsetRecord& m : trace.memsets) {
    groups.back().values.push_back(sizes ? m.bytes : Duration(m.start, m.end));
  }
  return groups;
}

Table KernelTable(const Timeline& timeline, bool by_grid_block) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = by_grid_block ? "cuda_gpu_kern_gb_sum" : "cuda_gpu_kern_sum";
  table.title = by_grid_block ? "CUDA GPU kernel summary by grid and block" : "CUDA GPU kernel summary";
  table.columns = kTimeColumns;
  if (by_grid_block) {
    table.columns.insert(table.columns.end() - 0, {"GridXYZ", ColumnType::kText});
    table.columns.push_back({"BlockXYZ", ColumnType::kText});
  }
  table.columns.push_back({"Name", ColumnType::kText});
  // Signature -> group; signatures that differ only in fields the table ignores share a group.
  const core::Dictionary& dict = trace.dict;
  std::vector<uint32_t> group_of(dict.signature_count() + 1, 0);
  absl::flat_hash_map<std::string, uint32_t> group_by_key;
  std::vector<Group> groups(1);
  std::vector<std::pair<std::string, std::string>> dims(1);
  for (uint32_t sig = 1; sig <= dict.signature_count(); ++sig) {
    const v1::KernelSignature& s = dict.signature(sig);
    std::string grid, block;
    std::string key = absl::StrCat(s.name());
    if (by_grid_block) {
      grid = absl::StrCat(s.grid_x(), " ", s.grid_y(), " ", s.grid_z());
      block = absl::StrCat(s.block_x(), " ", s.block_y(), " ", s.block_z());
      absl::StrAppend(&key, "|", grid, "|", block);
    }
    auto [it, inserted] = group_by_key.try_emplace(key, groups.size());
    if (inserted) {
      groups.push_back(Group{dict.kernel_name(sig), {}});
      dims.emplace_back(grid, block);
    }
    group_of[sig] = it->second;
  }
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k)) continue;
    const uint32_t g = k.signature < group_of.size() ? group_of[k.signature] : 0;
    groups[g].values.push_back(Duration(k.start, k.end));
  }
  if (!groups[0].values.empty()) groups[0].name = "(unknown kernel)";
  if (by_grid_block) {
    // Carry grid/block in the name until the rows are sorted, then split them back out.
    for (size_t g = 0; g < groups.size(); ++g) {
      groups[g].name = absl::StrCat(dims[g].first, "\t", dims[g].second, "\t", groups[g].name);
    }
  }
  AddTimeRows(groups, table);
  if (by_grid_block) {
    for (auto& row : table.rows) {
      std::string packed = std::move(row.back());
      row.pop_back();
      const size_t a = packed.find('\t');
      const size_t b = packed.find('\t', a + 1);
      row.push_back(packed.substr(0, a));
      row.push_back(packed.substr(a + 1, b - a - 1));
      row.push_back(packed.substr(b + 1));
    }
  }
  return table;
}

}  // namespace

Table KernelSummary(const Timeline& timeline) { return KernelTable(timeline, false); }
Table KernelGridBlockSummary(const Timeline& timeline) { return KernelTable(timeline, true); }

Table ApiSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = "cuda_api_sum";
  table.title = "CUDA API summary";
  table.columns = kTimeColumns;
  table.columns.push_back({"Name", ColumnType::kText});
  std::vector<Group> groups(trace.dict.function_count() + 1);
  for (uint32_t id = 1; id < groups.size(); ++id) groups[id].name = std::string(DisplayApiName(trace.dict.function_name(id)));
  groups[0].name = "(unknown API)";
  for (const core::ApiCallRow& call : trace.api_calls) {
    groups[call.function < groups.size() ? call.function : 0].values.push_back(Duration(call.start, call.end));
  }
  AddTimeRows(groups, table);
  return table;
}

Table MemoryTimeSummary(const Timeline& timeline) {
  Table table;
  table.name = "cuda_gpu_mem_time_sum";
  table.title = "CUDA GPU memory operations by time";
  table.columns = kTimeColumns;
  table.columns[2].name = "Count";
  table.columns.push_back({"Operation", ColumnType::kText});
  std::vector<Group> groups = MemoryGroups(timeline, false);
  AddTimeRows(groups, table);
  return table;
}

Table MemorySizeSummary(const Timeline& timeline) {
  Table table;
  table.name = "cuda_gpu_mem_size_sum";
  table.title = "CUDA GPU memory operations by size (MB = 10^6 bytes)";
  table.columns = {{"Total (MB)", ColumnType::kDecimal}, {"Count", ColumnType::kInteger},
                   {"Avg (MB)", ColumnType::kDecimal},   {"Med (MB)", ColumnType::kDecimal},
                   {"Min (MB)", ColumnType::kDecimal},   {"Max (MB)", ColumnType::kDecimal},
                   {"StdDev (MB)", ColumnType::kDecimal}, {"Operation", ColumnType::kText}};
  std::vector<Group> groups = MemoryGroups(timeline, true);
  std::vector<std::pair<Summary, std::string>> rows;
  for (Group& g : groups) {
    if (!g.values.empty()) rows.emplace_back(Summarize(g.values), g.name);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first.total > b.first.total; });
  auto mb = [](double bytes) { return absl::StrFormat("%.3f", bytes / 1e6); };
  for (auto& [s, name] : rows) {
    table.rows.push_back({mb(static_cast<double>(s.total)), absl::StrCat(s.count), mb(s.avg), mb(s.median),
                          mb(static_cast<double>(s.min)), mb(static_cast<double>(s.max)), mb(s.stddev), name});
  }
  return table;
}

Table KernelExecutionSummary(const Timeline& timeline) {
  const core::Trace& trace = timeline.trace();
  Table table;
  table.name = "cuda_kern_exec_sum";
  table.title = "CUDA kernel launch and execution: API time, queue delay (start - API end), kernel time";
  table.columns = {{"Count", ColumnType::kInteger},        {"QCount", ColumnType::kInteger},
                   {"TAvg (ns)", ColumnType::kDecimal},    {"TMed (ns)", ColumnType::kDecimal},
                   {"TMax (ns)", ColumnType::kInteger},    {"QAvg (ns)", ColumnType::kDecimal},
                   {"QMed (ns)", ColumnType::kDecimal},    {"QMax (ns)", ColumnType::kInteger},
                   {"KAvg (ns)", ColumnType::kDecimal},    {"KMed (ns)", ColumnType::kDecimal},
                   {"KMax (ns)", ColumnType::kInteger},    {"API Name", ColumnType::kText},
                   {"Kernel Name", ColumnType::kText}};
  struct Exec {
    std::vector<uint64_t> api, queue, kernel;
    uint32_t function = 0, name = 0;
  };
  absl::flat_hash_map<uint64_t, uint32_t> slot;  // function << 32 | kernel name string id
  std::vector<Exec> groups;
  for (const core::KernelRow& k : trace.kernels) {
    if (!timeline.OnTimeline(k)) continue;
    const core::ApiCallRow* call = timeline.ApiFor(k.correlation_id);
    if (call == nullptr) continue;
    const uint32_t name = trace.dict.has_signature(k.signature) ? trace.dict.signature(k.signature).name() : 0;
    auto [it, inserted] = slot.try_emplace((uint64_t{call->function} << 32) | name, groups.size());
    if (inserted) groups.push_back(Exec{{}, {}, {}, call->function, name});
    Exec& e = groups[it->second];
    e.api.push_back(Duration(call->start, call->end));
    if (k.start > call->end) e.queue.push_back(k.start - call->end);
    e.kernel.push_back(Duration(k.start, k.end));
  }
  std::sort(groups.begin(), groups.end(), [](const Exec& a, const Exec& b) { return a.kernel.size() > b.kernel.size(); });
  for (Exec& e : groups) {
    const Summary api = Summarize(e.api), queue = Summarize(e.queue), kernel = Summarize(e.kernel);
    table.rows.push_back({absl::StrCat(api.count), absl::StrCat(queue.count), Dec(api.avg), Dec(api.median),
                          absl::StrCat(api.max), Dec(queue.avg), Dec(queue.median), absl::StrCat(queue.max),
                          Dec(kernel.avg), Dec(kernel.median), absl::StrCat(kernel.max),
                          e.function < trace.dict.function_count() + 1 && e.function > 0
                              ? std::string(DisplayApiName(trace.dict.function_name(e.function)))
                              : std::string("(unknown API)"),
                          e.name ? trace.dict.str(e.name) : std::string("(unknown kernel)")});
  }
  return table;
}

const std::vector<std::string_view>& ReportNames() {
  static const std::vector<std::string_view> kNames = {"cuda_gpu_kern_sum",     "cuda_gpu_kern_gb_sum",
                                                       "cuda_api_sum",          "cuda_gpu_mem_time_sum",
                                                       "cuda_gpu_mem_size_sum", "cuda_kern_exec_sum"};
  return kNames;
}

std::optional<Table> BuildReport(std::string_view name, const Timeline& timeline) {
  if (name == "cuda_gpu_kern_sum") return KernelSummary(timeline);
  if (name == "cuda_gpu_kern_gb_sum") return KernelGridBlockSummary(timeline);
  if (name == "cuda_api_sum") return ApiSummary(timeline);
  if (name == "cuda_gpu_mem_time_sum") return MemoryTimeSummary(timeline);
  if (name == "cuda_gpu_mem_size_sum") return MemorySizeSummary(timeline);
  if (name == "cuda_kern_exec_sum") return KernelExecutionSummary(timeline);
  return std::nullopt;
}

namespace {

std::string WithThousands(const std::string& digits) {
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[i]);
    const size_t left = n - 1 - i;
    if (left > 0 && left % 3 == 0 && digits[i] != '-') out.push_back(',');
  }
  return out;
}

std::string FormatCell(const std::string& value, ColumnType type) {
  switch (type) {
    case ColumnType::kInteger: return WithThousands(value);
    case ColumnType::kDecimal: {
      const size_t dot = value.find('.');
      if (dot == std::string::npos) return WithThousands(value);
      return WithThousands(value.substr(0, dot)) + value.substr(dot);
    }
    case ColumnType::kPercent:
    case ColumnType::kText: return value;
  }
  return value;
}

}  // namespace

std::string RenderText(const Table& table, size_t max_rows) {
  const size_t shown = max_rows == 0 ? table.rows.size() : std::min(max_rows, table.rows.size());
  std::vector<std::vector<std::string>> cells(shown);
  std::vector<size_t> width(table.columns.size());
  for (size_t c = 0; c < table.columns.size(); ++c) width[c] = table.columns[c].name.size();
  for (size_t r = 0; r < shown; ++r) {
    for (size_t c = 0; c < table.columns.size() && c < table.rows[r].size(); ++c) {
      cells[r].push_back(FormatCell(table.rows[r][c], table.columns[c].type));
      width[c] = std::max(width[c], cells[r].back().size());
    }
  }
  std::string out = absl::StrCat(table.title, " (", table.name, "):\n\n");
  auto add_line = [&](const std::vector<std::string>& line, bool header) {
    std::string text;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const std::string& v = c < line.size() ? line[c] : std::string();
      const bool last = c + 1 == table.columns.size();
      const size_t pad = width[c] > v.size() ? width[c] - v.size() : 0;
      const bool left = table.columns[c].type == ColumnType::kText || header;
      if (c > 0) text += "  ";
      if (left) {
        text += v;
        if (!last) text.append(pad, ' ');
      } else {
        text.append(pad, ' ');
        text += v;
      }
    }
    absl::StrAppend(&out, text, "\n");
  };
  std::vector<std::string> header, rule;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    header.push_back(table.columns[c].name);
    rule.push_back(std::string(width[c], '-'));
  }
  add_line(header, true);
  add_line(rule, true);
  for (const auto& line : cells) add_line(line, false);
  if (table.rows.empty()) absl::StrAppend(&out, "(no rows)\n");
  if (shown < table.rows.size()) absl::StrAppend(&out, "... ", table.rows.size() - shown, " more rows\n");
  return out;
}

std::string RenderCsv(const Table& table) {
  auto quote = [](const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char ch : v) {
      if (ch == '"') q += '"';
      q += ch;
    }
    return q + "\"";
  };
  std::string out;
  for (size_t c = 0; c < table.columns.size(); ++c) absl::StrAppend(&out, c ? "," : "", quote(table.columns[c].name));
  out += "\n";
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c) absl::StrAppend(&out, c ? "," : "", quote(row[c]));
    out += "\n";
  }
  return out;
}

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<int>(ch));
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string RenderJson(const Table& table) {
  std::string out = absl::StrCat("{\"report\":", JsonQuote(table.name), ",\"title\":", JsonQuote(table.title), ",\"rows\":[");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out += r ? ",{" : "{";
    for (size_t c = 0; c < table.columns.size() && c < table.rows[r].size(); ++c) {
      const bool numeric = table.columns[c].type != ColumnType::kText;
      absl::StrAppend(&out, c ? "," : "", JsonQuote(table.columns[c].name), ":",
                      numeric ? table.rows[r][c] : JsonQuote(table.rows[r][c]));
    }
    out += "}";
  }
  return out + "]}";
}

}  // namespace cuscope::analysis
