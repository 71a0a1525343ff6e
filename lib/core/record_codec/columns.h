// Building blocks of the column-encoded record kinds (kernels, API calls, counter series): delta
// columns and optional columns, with their encode and decode side by side.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_COLUMNS_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_COLUMNS_H_

#include <cstdint>
#include <type_traits>

namespace cuscope::core {

// A span's duration as the trace stores it: an end before its start is an empty span.
inline uint64_t SpanDuration(uint64_t start, uint64_t end) { return end >= start ? end - start : 0; }

// Delta-encodes a column: each value is stored as its difference from the previous one, starting
// from an origin (a chunk's base time for timestamps, 0 for correlation ids). Differences wrap,
// so values out of order survive.
class DeltaEncoder {
 public:
  void Reset(uint64_t origin) { previous_ = origin; }
  int64_t Next(uint64_t value) {
    const int64_t delta = static_cast<int64_t>(value - previous_);
    previous_ = value;
    return delta;
  }

 private:
  uint64_t previous_ = 0;
};

// Undoes DeltaEncoder from the same origin.
class DeltaDecoder {
 public:
  explicit DeltaDecoder(uint64_t origin) : value_(origin) {}
  uint64_t Next(int64_t delta) {
    value_ += static_cast<uint64_t>(delta);
    return value_;
  }

 private:
  uint64_t value_;
};

// The columns every table of spans has (kernels, API calls): starts and correlation ids
// delta-encoded from the chunk's base time and from 0, and durations. Reset before each chunk.
class SpanColumnEncoder {
 public:
  // Appends one span to `out`'s start_delta, correlation_delta and duration columns; returns its
  // row index, which optional columns are back-filled up to.
  template <typename Columns>
  uint64_t Append(uint64_t start, uint64_t end, uint64_t correlation_id, uint64_t base_time_ns, Columns* out) {
    if (rows_ == 0) {
      start_.Reset(base_time_ns);
      correlation_.Reset(0);
    }
    out->add_start_delta(start_.Next(start));
    out->add_correlation_delta(correlation_.Next(correlation_id));
    out->add_duration(SpanDuration(start, end));
    return rows_++;
  }
  void Reset() { rows_ = 0; }

 private:
  uint64_t rows_ = 0;
  DeltaEncoder start_, correlation_;
};

// Reads SpanColumnEncoder's columns back, row after row.
template <typename Columns>
class SpanColumnDecoder {
 public:
  SpanColumnDecoder(const Columns& columns, uint64_t base_time_ns)
      : columns_(columns), start_(base_time_ns), correlation_(0) {}
  // The span columns have one entry per row.
  bool LengthsOk() const {
    const int rows = columns_.start_delta_size();
    return columns_.duration_size() == rows && columns_.correlation_delta_size() == rows;
  }
  int rows() const { return columns_.start_delta_size(); }
  // Fills row `i`'s start, end and correlation_id; rows are read in order.
  template <typename Row>
  void Read(int i, Row* row) {
    row->start = start_.Next(columns_.start_delta(i));
    row->end = row->start + columns_.duration(i);
    row->correlation_id = correlation_.Next(columns_.correlation_delta(i));
  }

 private:
  const Columns& columns_;
  DeltaDecoder start_, correlation_;
};

// Appends `value` to an optional column: the column stays empty while every row is zero, and is
// back-filled with zeros up to `row` the first time a non-zero value arrives.
template <typename Field, typename V>
void AppendOptional(Field* column, uint64_t row, V value) {
  if (column->empty()) {
    if (value == 0) return;
    column->Reserve(static_cast<int>(row + 1));
    for (uint64_t i = 0; i < row; ++i) column->Add(0);
  }
  column->Add(value);
}

// An optional column is well formed when empty or with one entry per row.
template <typename Column>
bool OptionalColumnOk(const Column& column, int rows) {
  return column.empty() || column.size() == rows;
}

// Row `i` of an optional column (zero when the column is empty).
template <typename Column>
auto OptionalAt(const Column& column, int i) -> std::remove_cvref_t<decltype(column.Get(i))> {
  return column.empty() ? 0 : column.Get(i);
}

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_COLUMNS_H_
