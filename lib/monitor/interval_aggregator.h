// Folds records into monitor mode's figures: one IntervalFigures per interval of fixed length,
// per device, with memory bounded however long the program runs.
//
// Records arrive the way CUPTI hands them over: in buffers, late, and out of order across streams
// and threads. The aggregator therefore keeps every interval open until the caller closes it
// (CloseBefore: once no more records can arrive for it, a few flush periods behind the clock). A
// record that still arrives for a closed interval is counted (launches, GPU time, bytes) in the
// oldest open one and in its `late_records`; only its busy time, in an interval already
// published, is not added. Intervals are numbered from `origin_ns` (the session's start); a
// record that began before it counts in the first.
//
// An activity spanning several intervals gives each its share of busy (or host) time; its count
// and duration go to the interval it started in. A device that has done anything appears in every
// later interval, idle ones included, so a server without traffic shows 100% idle, not nothing.
// A device's time counts from its first kernel, copy or memset on: before it, the program is
// starting (the context made inside its first CUDA call, modules loaded), and that time
// is neither busy nor idle, as in a trace's active span. Counted as idle, it made a short run's
// start-up its dominant cause ("alloc": the context is made inside the first cudaMalloc). A device
// seen only through its counters appears with no busy or idle time.
#ifndef CUSCOPE_LIB_MONITOR_INTERVAL_AGGREGATOR_H_
#define CUSCOPE_LIB_MONITOR_INTERVAL_AGGREGATOR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/intervals/interval_set.h"
#include "lib/core/api_names.h"
#include "lib/core/records.h"
#include "lib/monitor/figures.h"
#include "lib/monitor/sample_windows.h"
#include "lib/requests/request_ledger.h"

namespace cuscope::monitor {

class IntervalAggregator final : public core::ActivitySink {
 public:
  struct Options {
    uint64_t interval_ns = 1'000'000'000;
    uint32_t top_kernels = 10;
    // Bounds: distinct kernel names remembered, (name, grid, block) groups per device and
    // interval, and busy or host-call pieces per list before they are merged (beyond the names and
    // groups, kernels count as "other").
    size_t max_kernel_names = 8192;
    size_t max_kernel_groups = 4096;
    size_t max_pieces = 1 << 20;
    // Names a runtime or driver call by its callback id, for classifying it (api_names.h).
    std::function<std::string(v1::ApiDomain, uint32_t)> api_name;
    // Under a duty cycle (sample_windows.h): records come only from the windows OpenSample and
    // CloseSample mark, and every interval's figures are estimates drawn from them.
    bool sampled = false;
  };

  IntervalAggregator(Options options, uint64_t origin_ns);

  // core::ActivitySink. NVTX markers (and their payloads) and CUPTI overhead records are not part
  // of the figures.
  void Add(const core::KernelActivity& a) override;
  void Add(const core::ApiActivity& a) override;
  void Add(const core::MemcpyRecord& r) override;
  void Add(const core::MemsetRecord& r) override;
  void Add(const core::SyncRecord& r) override {}
  void Add(const core::NvtxActivity& a) override {}
  void Add(const core::NvtxPayloadRecord& p) override {}
  void Add(const core::MemoryOpRecord& r) override {}
  void Add(const core::OverheadActivity& a) override {}
  // Request scopes: each request's figures, once final, in the interval its scope ended in.
  void Add(const core::RequestScopeActivity& r) override;
  void AddUntranslated(uint32_t cupti_kind) override {}
  void AddIncomplete(uint32_t cupti_kind) override {}

  // One GPU counter sample, in the interval its start falls in.
  void AddCounter(uint32_t device, v1::CounterSource source, const std::string& name, const core::CounterPoint& p);
  // A duty cycle's recording window opens or closes (CUPTI clock; with Options::sampled).
  // `weight`: the program's time the window stands for, in multiples of its length (sample_windows.h).
  void OpenSample(uint64_t on_ns, double weight = 1) { samples_.Open(on_ns, weight); }
  void CloseSample(uint64_t off_ns, double weight = 0) { samples_.Close(off_ns, weight); }
  // Records CUPTI dropped, counted in the oldest open interval.
  void CountDropped(uint64_t records);

  // Closes, oldest first, every interval that ends at or before `watermark_ns`, empty ones included.
  std::vector<IntervalFigures> CloseBefore(uint64_t watermark_ns);
  // Closes every interval up to the one holding `end_ns` or the latest record's end, whichever is
  // later (at the session's stop; the last one ends there, shorter than the others).
  std::vector<IntervalFigures> CloseAll(uint64_t end_ns);

  uint64_t interval_ns() const { return options_.interval_ns; }

 private:
  using Pieces = std::vector<intervals::Interval>;
  struct KernelGroupKey {
    uint32_t name_id;  // kOtherName: past the name bound
    std::array<uint32_t, 3> grid;
    std::array<uint32_t, 3> block;
    template <typename H>
    friend H AbslHashValue(H h, const KernelGroupKey& k) {
      return H::combine(std::move(h), k.name_id, k.grid, k.block);
    }
    friend bool operator==(const KernelGroupKey&, const KernelGroupKey&) = default;
  };
  struct Tally {
    uint64_t count = 0;
    uint64_t ns = 0;
    uint64_t bytes = 0;
  };
  struct CounterTally {
    v1::CounterSource source = v1::COUNTER_SOURCE_UNKNOWN;
    uint64_t samples = 0;
    double sum = 0;
    double max = 0;
  };
  struct DeviceAccumulator {
    Pieces busy;
    absl::flat_hash_map<KernelGroupKey, Tally> kernels;
    Tally other_kernels;
    // Under a duty cycle, the kernels of CUDA graphs: CUPTI records them as the graph's
    // instantiation found recording (on: at every launch, windows or not), so they are whole
    // counts, not samples.
    absl::flat_hash_map<KernelGroupKey, Tally> graph_kernels;
    Tally other_graph_kernels;
    std::map<std::tuple<int, int, int>, Tally> copies;  // (copy kind, src kind, dst kind)
    Tally memsets;
    std::map<std::string, CounterTally> counters;
  };
  struct OpenInterval {
    std::map<uint32_t, DeviceAccumulator> devices;
    std::array<Pieces, kHostCauseCount - 1> host;  // by cause, kOutsideCuda excluded
    uint64_t launch_calls = 0;
    uint64_t sync_calls = 0;
    uint64_t sync_wait_ns = 0;
    uint64_t dropped = 0;
    uint64_t late = 0;
    std::vector<requests::RequestFigures> requests;  // final, ended in the interval
  };
  static constexpr uint32_t kOtherName = 0xffffffffu;

  // The open interval a record starting at `time` counts in (a late one: the oldest open).
  int64_t IndexOf(uint64_t time) const;
  OpenInterval& Open(int64_t index);
  OpenInterval& OpenFor(uint64_t time);
  uint64_t StartOf(int64_t index) const { return origin_ + static_cast<uint64_t>(index) * options_.interval_ns; }
  // Adds [begin, end) to the per-interval lists `pick` selects, split at interval boundaries.
  void AddSpan(uint64_t begin, uint64_t end, const std::function<Pieces&(OpenInterval&)>& pick);
  void SeeDevice(uint32_t device);
  void AddBusy(uint32_t device, uint64_t begin, uint64_t end);
  void AddPiece(Pieces& pieces, intervals::Interval piece) const;
  uint32_t NameId(std::string_view name);
  const core::ApiTraits& TraitsOf(v1::ApiDomain domain, uint32_t cbid);
  IntervalFigures Close(int64_t index, uint64_t end_ns);
  // The requests final by `horizon`, each to the interval its scope ended in.
  void TakeRequests(std::vector<requests::RequestFigures> done);
  // `windows`: the duty cycle's windows of the interval (null without one), whose figures scale
  // counts by `count_scale`.
  DeviceFigures CloseDevice(uint32_t device, DeviceAccumulator& acc, const std::array<intervals::IntervalSet, kHostCauseCount - 1>& host,
                            intervals::Interval span, const std::vector<SampleWindow>* windows, double count_scale);

  const Options options_;
  const uint64_t origin_;
  int64_t next_to_close_ = 0;  // intervals before it are closed
  uint64_t latest_end_ = 0;    // of any record
  std::map<int64_t, OpenInterval> open_;
  std::vector<uint32_t> devices_seen_;  // sorted
  std::vector<uint32_t> devices_started_;  // sorted: those whose first operation is in a closed interval
  absl::flat_hash_map<std::string, uint32_t> name_ids_;
  std::vector<std::string> names_;
  absl::flat_hash_map<uint64_t, core::ApiTraits> traits_;
  requests::RequestLedger ledger_;
  core::CallCategories categories_;  // a launch while its thread captures a stream is setup
  SampleWindows samples_;
  // Under a duty cycle, when each recorded launch call returned, by correlation id, until its
  // kernel comes: a kernel is recorded as its launch found recording, so it belongs to the window
  // of its launch, which may be long before it runs (a deep queue).
  absl::flat_hash_map<uint32_t, uint64_t> launch_ends_;
};

}  // namespace cuscope::monitor

#endif  // CUSCOPE_LIB_MONITOR_INTERVAL_AGGREGATOR_H_
