#include "lib/export/sqlite_database.h"

#include <sqlite3.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cuscope::exporter {
namespace {

absl::Status SqliteError(sqlite3* db, std::string_view what) {
  return absl::InternalError(absl::StrCat("SQLite: ", std::string(what), ": ", db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  if (status_.ok() && sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) status_ = SqliteError(db_, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, double value) {
  if (status_.ok() && sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) status_ = SqliteError(db_, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::string_view text) {
  if (status_.ok() &&
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK) {
    status_ = SqliteError(db_, absl::StrCat("bind text of ", text.size(), " bytes as parameter ", index, " of ", sqlite3_sql(stmt_)));
  }
  return *this;
}

SqliteStatement& SqliteStatement::BindNull(int index) {
  if (status_.ok() && sqlite3_bind_null(stmt_, index) != SQLITE_OK) status_ = SqliteError(db_, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, std::optional<int64_t> value) {
  return value.has_value() ? Bind(index, *value) : BindNull(index);
}

absl::Status SqliteStatement::Run() {
  if (!status_.ok()) return status_;
  const int rc = sqlite3_step(stmt_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) status_ = SqliteError(db_, "insert");
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return status_;
}

absl::StatusOr<std::unique_ptr<SqliteDatabase>> SqliteDatabase::Create(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                                 nullptr);
  if (rc != SQLITE_OK) {
    absl::Status st = SqliteError(db, absl::StrCat("cannot open ", path));
    sqlite3_close(db);
    return st;
  }
  auto database = std::unique_ptr<SqliteDatabase>(new SqliteDatabase(db));
  // A fresh temporary file that is put in place only when complete: no journal, no fsync.
  if (absl::Status st = database->Execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"); !st.ok()) return st;
  return database;
}

SqliteDatabase::~SqliteDatabase() { sqlite3_close(db_); }

absl::Status SqliteDatabase::Execute(std::string_view sql) {
  char* message = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    absl::Status st = absl::InternalError(absl::StrCat("SQLite: ", message != nullptr ? message : "error"));
    sqlite3_free(message);
    return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SqliteStatement>> SqliteDatabase::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return SqliteError(db_, absl::StrCat("prepare ", std::string(sql.substr(0, 60))));
  }
  return std::unique_ptr<SqliteStatement>(new SqliteStatement(db_, stmt));
}

absl::Status SqliteDatabase::LimitBytes(uint64_t bytes) {
  sqlite3_stmt* stmt = nullptr;
  int64_t page_size = 4096;
  if (sqlite3_prepare_v2(db_, "PRAGMA page_size", -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    page_size = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  const uint64_t pages = std::max<uint64_t>(1, bytes / static_cast<uint64_t>(std::max<int64_t>(page_size, 512)));
  return Execute(absl::StrCat("PRAGMA max_page_count = ", std::min<uint64_t>(pages, 0xfffffffeu)));
}

int64_t SqliteDatabase::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

absl::Status SqliteDatabase::Close() {
  if (db_ == nullptr) return absl::OkStatus();
  const int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) return SqliteError(db_, "close");
  db_ = nullptr;
  return absl::OkStatus();
}

}  // namespace cuscope::exporter
