// `cuscope log`: a tuning log kept in the user's project, one entry per change tried, with the key
// figures before and after (from two traces or two sets of runs) and the verdict of `cuscope diff`.
//
// The file's format follows its name: ".md" is a Markdown table (a header row when the file is
// new, then one row per entry: readable in any Markdown viewer, shown as is by `log show`);
// anything else is JSON Lines, one object per line (the default, cuscope_tuning_log.jsonl, which
// `log show` renders as a table and tools such as jq read). Entries are only ever appended.
#ifndef CUSCOPE_LIB_REPORT_TUNING_LOG_H_
#define CUSCOPE_LIB_REPORT_TUNING_LOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/report/diff.h"
#include "lib/report/run_figures.h"

namespace cuscope::report {

inline constexpr char kDefaultLogFile[] = "cuscope_tuning_log.jsonl";

struct LogSide {
  std::vector<std::string> traces;
  double time_ns = 0;        // the compared time (LogEntry::compared), mean over the runs
  double end_to_end_ns = 0;  // first to last recorded activity, mean over the runs
  double gpu_busy_share = 0;
  double kernel_time_ns = 0;
  std::string top_finding;  // "rule.id: headline" of the first run's top finding, or "none"
};

struct LogEntry {
  std::string date;  // UTC, ISO 8601: "2024-12-03T07:40:00Z"
  std::string change;
  // The time the verdict is on, as `cuscope diff` names it: "steady_state" (its default),
  // "end_to_end" (--span all, and every entry written before the log said which), "nvtx_range"
  // (--nvtx RANGE: the range's mean length).
  std::string compared;
  LogSide before, after;
  std::string verdict;     // VerdictName
  std::string conclusion;  // the diff's sentence
};

// The entry for a change, from the diff of its runs and the runs themselves. Pure: `now` is passed in.
LogEntry MakeLogEntry(const DiffResult& diff, const std::vector<RunFigures>& base, const std::vector<RunFigures>& next,
                      std::string change, absl::Time now);

// True for a path whose entries are Markdown table rows (it ends in ".md").
bool IsMarkdownLog(std::string_view path);

std::string EntryToJsonLine(const LogEntry& entry);  // no trailing newline
absl::StatusOr<LogEntry> EntryFromJsonLine(std::string_view line);
std::string MarkdownLogHeader();                        // two lines, newline-terminated
std::string EntryToMarkdownRow(const LogEntry& entry);  // one line, newline-terminated

// Appends the entry to the file, creating it (with the Markdown header for ".md") when missing.
absl::Status AppendLogEntry(const std::string& path, const LogEntry& entry);
// The entries of a JSON Lines log, oldest first; blank lines are skipped, a bad line is an error
// naming its line number.
absl::StatusOr<std::vector<LogEntry>> ReadJsonLog(const std::string& path);
// The entries as a text table, with each conclusion on the line under its row.
std::string RenderLogTable(const std::vector<LogEntry>& entries);

}  // namespace cuscope::report

#endif  // CUSCOPE_LIB_REPORT_TUNING_LOG_H_
