#include "lib/report/tuning_log.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/analysis/finding.h"
#include "lib/core/output_file.h"
#include "lib/core/terminal_text.h"
#include "lib/report/json_writer.h"

namespace cuscope::report {
namespace {

LogSide SideOf(const std::vector<RunFigures>& runs, const SideStats& compared, const SideStats& busy,
               const SideStats& kernel) {
  LogSide s;
  for (const RunFigures& r : runs) {
    s.traces.push_back(r.label);
    s.end_to_end_ns += static_cast<double>(r.end_to_end_ns) / static_cast<double>(runs.size());
  }
  s.time_ns = compared.mean;
  s.gpu_busy_share = busy.mean;
  s.kernel_time_ns = kernel.mean;
  const FindingFigure* top = runs.empty() ? nullptr : runs.front().top_finding();
  s.top_finding = top ? absl::StrCat(top->rule_id, ": ", top->headline) : "none";
  return s;
}

void WriteSide(JsonWriter& w, const LogSide& s) {
  w.BeginObject().Key("traces").BeginArray();
  for (const std::string& t : s.traces) w.String(t);
  w.EndArray().Field("time_ns", s.time_ns).Field("end_to_end_ns", s.end_to_end_ns);
  w.Field("gpu_busy_share", s.gpu_busy_share);
  w.Field("kernel_time_ns", s.kernel_time_ns).Field("top_finding", s.top_finding).EndObject();
}

using google::protobuf::Struct;
using google::protobuf::Value;

const Value* Member(const Struct& s, const char* key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? nullptr : &it->second;
}

std::string StringMember(const Struct& s, const char* key) {
  const Value* v = Member(s, key);
  return v && v->kind_case() == Value::kStringValue ? v->string_value() : std::string();
}

double NumberMember(const Struct& s, const char* key) {
  const Value* v = Member(s, key);
  return v && v->kind_case() == Value::kNumberValue ? v->number_value() : 0;
}

LogSide SideFrom(const Struct& s) {
  LogSide side;
  if (const Value* t = Member(s, "traces"); t && t->kind_case() == Value::kListValue) {
    for (const Value& v : t->list_value().values()) {
      if (v.kind_case() == Value::kStringValue) side.traces.push_back(v.string_value());
    }
  }
  side.end_to_end_ns = NumberMember(s, "end_to_end_ns");
  // Entries written before the log named its span compared end to end.
  side.time_ns = Member(s, "time_ns") != nullptr ? NumberMember(s, "time_ns") : side.end_to_end_ns;
  side.gpu_busy_share = NumberMember(s, "gpu_busy_share");
  side.kernel_time_ns = NumberMember(s, "kernel_time_ns");
  side.top_finding = StringMember(s, "top_finding");
  return side;
}

// A Markdown table cell: pipes escaped, no line breaks.
std::string MdCell(std::string_view s) {
  return absl::StrReplaceAll(absl::string_view(s.data(), s.size()),
                             {{"|", "\\|"}, {"\r\n", " "}, {"\n", " "}, {"\r", " "}});
}

std::string Duration(double ns) { return analysis::FormatDuration(analysis::ClampToU64(ns)); }

// How a table names the compared time.
std::string ComparedWord(std::string_view compared) {
  if (compared == "steady_state") return "steady";
  if (compared == "nvtx_range") return "NVTX range";
  return "end to end";
}

std::string BeforeAfter(double before, double after, bool share) {
  if (share) return absl::StrCat(analysis::FormatPercent(before), " -> ", analysis::FormatPercent(after));
  return absl::StrCat(Duration(before), " -> ", Duration(after));
}

}  // namespace

LogEntry MakeLogEntry(const DiffResult& diff, const std::vector<RunFigures>& base, const std::vector<RunFigures>& next,
                      std::string change, absl::Time now) {
  LogEntry e;
  e.date = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
  e.change = std::move(change);
  e.compared = diff.end_to_end.name;
  e.before = SideOf(base, diff.end_to_end.base, diff.gpu_busy.base, diff.kernel_time.base);
  e.after = SideOf(next, diff.end_to_end.next, diff.gpu_busy.next, diff.kernel_time.next);
  e.verdict = std::string(VerdictName(diff.verdict));
  e.conclusion = diff.conclusion;
  return e;
}

bool IsMarkdownLog(std::string_view path) {
  return absl::EndsWithIgnoreCase(absl::string_view(path.data(), path.size()), ".md");
}

std::string EntryToJsonLine(const LogEntry& e) {
  JsonWriter w;
  w.BeginObject().Field("date", e.date).Field("change", e.change).Field("compared", e.compared).Key("before");
  WriteSide(w, e.before);
  w.Key("after");
  WriteSide(w, e.after);
  w.Field("verdict", e.verdict).Field("conclusion", e.conclusion).EndObject();
  return w.Take();
}

absl::StatusOr<LogEntry> EntryFromJsonLine(std::string_view line) {
  Struct root;
  const auto status = google::protobuf::util::JsonStringToMessage(std::string(line), &root);
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat("not a JSON object: ", status.message().ToString()));
  LogEntry e;
  e.date = StringMember(root, "date");
  e.change = StringMember(root, "change");
  e.compared = StringMember(root, "compared");
  if (e.compared.empty()) e.compared = "end_to_end";
  if (const Value* v = Member(root, "before"); v && v->kind_case() == Value::kStructValue)
    e.before = SideFrom(v->struct_value());
  if (const Value* v = Member(root, "after"); v && v->kind_case() == Value::kStructValue)
    e.after = SideFrom(v->struct_value());
  e.verdict = StringMember(root, "verdict");
  e.conclusion = StringMember(root, "conclusion");
  if (e.date.empty() && e.change.empty()) return absl::InvalidArgumentError("no date and no change: not a log entry");
  return e;
}

std::string MarkdownLogHeader() {
  return "| date | change | time compared | GPU busy | kernel time | verdict | top finding before | top finding after | "
         "conclusion | traces |\n"
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
}

std::string EntryToMarkdownRow(const LogEntry& e) {
  return absl::StrCat("| ", MdCell(e.date), " | ", MdCell(e.change), " | ",
                      BeforeAfter(e.before.time_ns, e.after.time_ns, false), " (", ComparedWord(e.compared), ") | ",
                      BeforeAfter(e.before.gpu_busy_share, e.after.gpu_busy_share, true), " | ",
                      BeforeAfter(e.before.kernel_time_ns, e.after.kernel_time_ns, false), " | ", MdCell(e.verdict),
                      " | ", MdCell(e.before.top_finding), " | ", MdCell(e.after.top_finding), " | ",
                      MdCell(e.conclusion), " | ", MdCell(absl::StrJoin(e.before.traces, ", ")), " -> ",
                      MdCell(absl::StrJoin(e.after.traces, ", ")), " |\n");
}

absl::Status AppendLogEntry(const std::string& path, const LogEntry& entry) {
  // The log is rewritten whole: its contents now and the entry go to a new file that replaces it,
  // so a symbolic link at the path is replaced rather than written through, and a reader never sees
  // half an entry. Two runs adding at the same moment can lose one entry (the later rename wins).
  absl::StatusOr<std::string> existing = core::ReadFileForRewrite(path);
  if (!existing.ok()) return existing.status();
  std::string text = *std::move(existing);
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (IsMarkdownLog(path)) {
    absl::StrAppend(&text, text.empty() ? MarkdownLogHeader() : "", EntryToMarkdownRow(entry));
  } else {
    absl::StrAppend(&text, EntryToJsonLine(entry), "\n");
  }
  return core::WriteOutputFile(path, text, /*overwrite=*/true);
}

absl::StatusOr<std::vector<LogEntry>> ReadJsonLog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": no such log (cuscope log add writes it)"));
  std::vector<LogEntry> entries;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    absl::StatusOr<LogEntry> e = EntryFromJsonLine(line);
    if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", e.status().message()));
    entries.push_back(*std::move(e));
  }
  return entries;
}

std::string RenderLogTable(const std::vector<LogEntry>& entries) {
  if (entries.empty()) return "The tuning log has no entries.\n";
  struct Row {
    std::vector<std::string> cells;
  };
  const std::vector<std::string> header = {"#",        "date",        "change",  "time compared",
                                           "GPU busy", "kernel time", "verdict", "top finding after"};
  std::vector<Row> rows;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LogEntry& e = entries[i];
    std::string change = e.change;
    if (change.size() > 40) change = absl::StrCat(change.substr(0, 39), "~");
    std::string top = e.after.top_finding;
    if (const size_t colon = top.find(':'); colon != std::string::npos) top = top.substr(0, colon);
    // The table is for a terminal, and the log's text may hold anything (a finding names a kernel).
    rows.push_back(Row{{absl::StrCat(i + 1), core::EscapeForTerminal(e.date), core::EscapeForTerminal(change),
                        absl::StrCat(BeforeAfter(e.before.time_ns, e.after.time_ns, false), " (",
                                     ComparedWord(e.compared), ")"),
                        BeforeAfter(e.before.gpu_busy_share, e.after.gpu_busy_share, true),
                        BeforeAfter(e.before.kernel_time_ns, e.after.kernel_time_ns, false),
                        core::EscapeForTerminal(e.verdict), core::EscapeForTerminal(top)}});
  }
  std::vector<size_t> width(header.size());
  const auto columns = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xc0) != 0x80;
    return n;
  };
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = columns(header[c]);
    for (const Row& r : rows) width[c] = std::max(width[c], columns(r.cells[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      out += cells[c];
      if (c + 1 < cells.size()) out += std::string(width[c] - columns(cells[c]), ' ');
    }
    return out + "\n";
  };
  std::string out = line(header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  out += line(rule);
  for (size_t i = 0; i < rows.size(); ++i) {
    out += line(rows[i].cells);
    if (!entries[i].conclusion.empty())
      absl::StrAppend(&out, std::string(width[0] + 2, ' '), entries[i].conclusion, "\n");
  }
  return out;
}

}  // namespace cuscope::report
