// The tables of `cuscope export --format sqlite`.
//
// Two families:
//   * nsys's own tables for the same things, with nsys's names, columns and units (Nsight Systems
//     `nsys export --type sqlite`, schema 3.16, the 2024.6 releases, plus the graph and cluster
//     columns of later ones), so that a query written against an nsys export runs unchanged:
//     StringIds, META_DATA_EXPORT, TARGET_INFO_SESSION_START_TIME, ANALYSIS_DETAILS, PROCESSES,
//     ThreadNames, TARGET_INFO_GPU, CUPTI_ACTIVITY_KIND_{KERNEL,RUNTIME,MEMCPY,MEMSET,
//     SYNCHRONIZATION}, NVTX_EVENTS and the ENUM_* tables they reference. As in nsys: times are
//     nanoseconds from the session's start, names are StringIds ids, threads are globalTid values
//     (pid << 24 | tid; pid = globalTid / 0x1000000 % 0x1000000, tid = globalTid % 0x1000000),
//     driver calls are RUNTIME rows of eventClass 1, an NVTX range is one row (marks have no end).
//   * cuscope's own tables, named CUSCOPE_*, for what nsys has no table for or records otherwise:
//     launches replayed to collect metrics, kernel metrics, GPU counter samples, capture windows,
//     the top-down's choices, launch stacks and their frames, graph nodes' origins, request scopes,
//     monitor mode's intervals, memory allocations, CUPTI's overhead records and the analyzer's
//     findings.
// docs/exports.md ("SQL: an SQLite database nsys's scripts read") lists every table and column.
#ifndef CUSCOPE_LIB_EXPORT_SQLITE_SCHEMA_H_
#define CUSCOPE_LIB_EXPORT_SQLITE_SCHEMA_H_

#include <string_view>

namespace cuscope::exporter {

// The schema version of nsys's exporter whose tables the common ones follow.
inline constexpr std::string_view kNsysSchemaVersion = "3.16.1";

// Every CREATE TABLE statement, then the rows of the ENUM tables.
std::string_view SqliteSchema();

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_SQLITE_SCHEMA_H_
