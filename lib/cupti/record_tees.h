// Where a buffer's translated records go besides the trace: sinks that pass each record on to the
// trace (the chunk builder), the figures (monitor mode's intervals, flight mode's idle trigger) and
// a step range's watch, in the combination the session's mode composes once at its start.
//
// Pure: records in, records out; no CUPTI.
#ifndef CUSCOPE_LIB_CUPTI_RECORD_TEES_H_
#define CUSCOPE_LIB_CUPTI_RECORD_TEES_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "lib/core/records.h"
#include "lib/core/step_range_watch.h"

namespace cuscope::cupti {

// A stretch of CUPTI's clock whose records reach the trace (end UINT64_MAX while open).
struct TraceSpan {
  uint64_t start = 0;
  uint64_t end = 0;
};

// Whether time `t` lies in one of `spans`, which open one after another (in start order, apart).
bool InSpans(uint64_t t, const std::vector<TraceSpan>& spans);

// Only records that started inside one of the spans reach the trace: trace mode with the kinds
// held on from the start (records outside the timeline windows are dropped as CUPTI would not have
// made them with the kinds off), and monitor mode's trace windows. A marker's payload goes with
// its marker. Kept for the session, its spans set before each buffer (SetSpans).
class SpanFilter final : public core::ActivitySink {
 public:
  explicit SpanFilter(core::ActivitySink& trace) : trace_(trace) {}
  // The spans known now: a buffer handed over after a span closed still holds records from inside it.
  void SetSpans(std::vector<TraceSpan> spans) { spans_ = std::move(spans); }
  bool has_spans() const { return !spans_.empty(); }

  void Add(const core::KernelActivity& a) override { Keep(a.start, a); }
  void Add(const core::ApiActivity& a) override { Keep(a.start, a); }
  void Add(const core::MemcpyRecord& r) override { Keep(r.start, r); }
  void Add(const core::MemsetRecord& r) override { Keep(r.start, r); }
  void Add(const core::SyncRecord& r) override { Keep(r.start, r); }
  void Add(const core::NvtxActivity& a) override;
  void Add(const core::NvtxPayloadRecord& p) override;
  void Add(const core::MemoryOpRecord& r) override { Keep(r.time, r); }
  void Add(const core::OverheadActivity& a) override { Keep(a.start, a); }
  void Add(const core::RequestScopeActivity& r) override { Keep(r.start, r); }
  void AddUntranslated(uint32_t kind) override { trace_.AddUntranslated(kind); }
  void AddIncomplete(uint32_t kind) override { trace_.AddIncomplete(kind); }

  // Markers kept whose payload may still come; past this many the oldest are forgotten.
  static constexpr size_t kMaxMarkersAwaitingPayload = 4096;

 private:
  template <typename R>
  void Keep(uint64_t start, const R& r) {
    if (InSpans(start, spans_)) trace_.Add(r);
  }
  core::ActivitySink& trace_;
  std::vector<TraceSpan> spans_;
  absl::flat_hash_set<uint64_t> kept_markers_;
};

// Every record to the trace, and also to the figures (flight mode's idle trigger; may be null);
// NVTX ranges to the step range's watch (may be null), which calls `slow` with a watched range's
// length when it took longer than its threshold.
class FlightTee final : public core::ActivitySink {
 public:
  FlightTee(core::ActivitySink& trace, core::StepRangeWatch* watch, std::function<void(uint64_t)> slow,
            core::ActivitySink* figures)
      : trace_(trace), watch_(watch), slow_(std::move(slow)), figures_(figures) {}
  void Add(const core::KernelActivity& a) override { Both(a); }
  void Add(const core::ApiActivity& a) override { Both(a); }
  void Add(const core::MemcpyRecord& r) override { Both(r); }
  void Add(const core::MemsetRecord& r) override { Both(r); }
  void Add(const core::SyncRecord& r) override { Both(r); }
  void Add(const core::NvtxActivity& a) override;
  void Add(const core::NvtxPayloadRecord& p) override { trace_.Add(p); }
  void Add(const core::MemoryOpRecord& r) override { Both(r); }
  void Add(const core::OverheadActivity& a) override { Both(a); }
  void Add(const core::RequestScopeActivity& r) override { Both(r); }
  void AddUntranslated(uint32_t kind) override { trace_.AddUntranslated(kind); }
  void AddIncomplete(uint32_t kind) override { trace_.AddIncomplete(kind); }

 private:
  template <typename R>
  void Both(const R& r) {
    trace_.Add(r);
    if (figures_ != nullptr) figures_->Add(r);
  }
  core::ActivitySink& trace_;
  core::StepRangeWatch* watch_;
  std::function<void(uint64_t)> slow_;
  core::ActivitySink* figures_;
};

// Monitor mode: every record folds into the figures, and reaches the trace through `trace` (a
// SpanFilter of the trace windows) while it is switched on.
class MonitorTee final : public core::ActivitySink {
 public:
  MonitorTee(core::ActivitySink& figures, core::ActivitySink& trace) : figures_(figures), trace_(trace) {}
  // Off: the figures alone (no trace window known, or the trace takes nothing more).
  void set_trace_on(bool on) { trace_on_ = on; }

  void Add(const core::KernelActivity& a) override { Both(a); }
  void Add(const core::ApiActivity& a) override { Both(a); }
  void Add(const core::MemcpyRecord& r) override { Both(r); }
  void Add(const core::MemsetRecord& r) override { Both(r); }
  void Add(const core::SyncRecord& r) override { Both(r); }
  void Add(const core::NvtxActivity& a) override { Both(a); }
  void Add(const core::NvtxPayloadRecord& p) override {
    if (trace_on_) trace_.Add(p);
  }
  void Add(const core::MemoryOpRecord& r) override { Both(r); }
  void Add(const core::OverheadActivity& a) override { Both(a); }
  void Add(const core::RequestScopeActivity& r) override { Both(r); }
  void AddUntranslated(uint32_t kind) override {
    if (trace_on_) trace_.AddUntranslated(kind);
  }
  void AddIncomplete(uint32_t kind) override {
    if (trace_on_) trace_.AddIncomplete(kind);
  }

 private:
  template <typename R>
  void Both(const R& r) {
    figures_.Add(r);
    if (trace_on_) trace_.Add(r);
  }
  core::ActivitySink& figures_;
  core::ActivitySink& trace_;
  bool trace_on_ = false;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_RECORD_TEES_H_
