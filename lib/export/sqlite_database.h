// A thin owner of one SQLite database and its prepared statements, with errors as absl::Status.
//
// The SQLite export writes tens of millions of rows: statements are prepared once and reused
// (Bind, Step, Reset), the whole export is one transaction, and the database is opened without a
// journal or fsyncs (the file is a fresh temporary one that only a finished export puts in place).
#ifndef CUSCOPE_LIB_EXPORT_SQLITE_DATABASE_H_
#define CUSCOPE_LIB_EXPORT_SQLITE_DATABASE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace cuscope::exporter {

class SqliteStatement {
 public:
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters count from 1, as in SQLite. Unsigned values past INT64_MAX keep their bits (SQLite
  // integers are signed 64-bit; the schema says which columns carry such values).
  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& BindU64(int index, uint64_t value) { return Bind(index, static_cast<int64_t>(value)); }
  SqliteStatement& Bind(int index, double value);
  SqliteStatement& Bind(int index, std::string_view text);
  SqliteStatement& BindNull(int index);
  // Binds the value or NULL.
  SqliteStatement& Bind(int index, std::optional<int64_t> value);

  // Runs an INSERT (or any statement without result rows) and resets it for the next row; the
  // first error is kept and every later Run returns it.
  absl::Status Run();

 private:
  friend class SqliteDatabase;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  absl::Status status_;
};

class SqliteDatabase {
 public:
  // Opens (creating) the database file at `path` for writing.
  static absl::StatusOr<std::unique_ptr<SqliteDatabase>> Create(const std::string& path);
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;
  ~SqliteDatabase();

  // Runs one or more statements that return no rows.
  absl::Status Execute(std::string_view sql);
  absl::StatusOr<std::unique_ptr<SqliteStatement>> Prepare(std::string_view sql);
  // Writes past `bytes` fail with SQLite's "database or disk is full".
  absl::Status LimitBytes(uint64_t bytes);
  // The id of the last inserted row.
  int64_t LastInsertRowId() const;
  // Closes the database; the first error of the close.
  absl::Status Close();

 private:
  explicit SqliteDatabase(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace cuscope::exporter

#endif  // CUSCOPE_LIB_EXPORT_SQLITE_DATABASE_H_
