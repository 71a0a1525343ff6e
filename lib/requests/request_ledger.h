// A request's GPU time, queueing and idle time, joined from its scope, its thread's CUDA calls and
// the GPU work those calls launched. Pure: fed records, tested with fabricated ones; monitor mode
// feeds it live (monitor::IntervalAggregator) and the analyzer feeds it a whole trace
// (analysis::BuildRequests), so both say the same of the same request.
//
// The join. A scope (include/cuscope/request.h) is a span on one host thread. A CUDA call belongs to
// the innermost scope of its thread open at the call's start; a GPU operation (kernel, copy,
// memset, each of a CUDA graph's nodes) belongs to the scope of the call with its correlation id.
// A request scope's figures are its own operations' plus, for each batch scope that names it, an
// equal share of the batch's operations (a batch of n requests: each request gets 1/n of every
// kernel's and copy's time).
//
//   gpu_ns    its kernels' summed durations (batch shares included)
//   copy_ns   its copies' and memsets' summed durations
//   queue_ns  the time its operations waited on the GPU: each operation is ready once its call has
//             returned and the previous operation of its stream (of this request) has ended; from
//             then to its start it waits (behind other work, or a launch's latency of a few
//             microseconds). The union of those waits, its batches' included.
//   first queue  from its first launch call's start to its first operation's start
//   idle_ns   the stretches of its span in which its device ran nothing (the device of its first
//             operation; every device seen when it launched nothing), split by what its thread was
//             doing meanwhile (core::HostCause: the calls of that thread inside the span)
//
// Order. Scopes arrive as a begin and an end (live) or whole (from a trace), in the order of their
// starts on each thread; calls after the begin of their scope; operations after their call. A request is final once the caller's horizon passes
// its end: records of its operations that come after that are left out.
// Memory is bounded: open scopes, calls kept per scope, GPU history and batch shares have caps.
#ifndef CUSCOPE_LIB_REQUESTS_REQUEST_LEDGER_H_
#define CUSCOPE_LIB_REQUESTS_REQUEST_LEDGER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/intervals/interval_set.h"
#include "lib/core/api_names.h"

namespace cuscope::requests {

enum class WorkKind : uint8_t { kKernel, kCopy, kMemset };

// One request's figures, final (see the file comment for what each means).
struct RequestFigures {
  uint64_t id = 0;
  uint32_t route = 0;   // RequestLedger::RouteName; 0: none
  uint64_t thread = 0;  // as the caller names threads
  uint64_t start = 0;
  uint64_t end = 0;
  double gpu_ns = 0;
  uint64_t kernels = 0;  // its own and its batches' kernels (a batch's kernel counts for each request)
  double copy_ns = 0;
  uint64_t copies = 0;
  uint64_t first_launch = 0;  // 0: it launched nothing
  uint64_t first_work = 0;    // 0: no operation of it ran
  uint32_t device = 0;        // of its first operation
  uint64_t queue_ns = 0;
  // The stretches it waited (Options::keep_waits), to tell whose work it waited behind.
  std::vector<intervals::Interval> waits;
  uint32_t batches = 0;       // batch scopes that served it
  uint64_t idle_ns = 0;
  std::array<uint64_t, core::kHostCauseCount> idle_by_cause_ns{};

  uint64_t span_ns() const { return end > start ? end - start : 0; }
  uint64_t first_queue_ns() const {
    return first_launch != 0 && first_work > first_launch ? first_work - first_launch : 0;
  }
};

class RequestLedger {
 public:
  struct Options {
    size_t max_open_scopes = size_t{1} << 16;   // past it the oldest is dropped (counted)
    size_t max_calls_per_scope = 4096;          // for the idle split; later calls of a scope count as none
    size_t max_operations_per_scope = 16384;    // for the waits, and calls owned; later ones count for nothing
    size_t max_routes = 64;                     // distinct route names; later ones are "other"
    uint64_t history_ns = 60'000'000'000ull;    // GPU work and batch shares kept behind the horizon
    size_t max_history_operations = size_t{1} << 20;  // per device
    // Called for each call given to a scope: its correlation id, and the scope's route (0 for a
    // batch). The analyzer uses it to name whose work a request waited behind.
    std::function<void(uint64_t correlation_id, uint32_t route, bool batch)> owned;
    bool keep_waits = false;  // RequestFigures::waits
  };
  RequestLedger() : RequestLedger(Options{}) {}
  explicit RequestLedger(Options options);

  // A scope opens on `thread` at `start`. `route` "" for none; `members` the requests a batch serves.
  void BeginScope(uint64_t thread, uint64_t start, uint64_t id, bool batch, std::string_view route,
                  std::span<const uint64_t> members);
  // The scope BeginScope opened with this thread, id and start ends (a scope whose begin was not
  // seen is taken whole).
  void EndScope(uint64_t thread, uint64_t start, uint64_t end, uint64_t id, bool batch, std::string_view route,
                std::span<const uint64_t> members);
  void Call(uint64_t thread, uint64_t start, uint64_t end, uint64_t correlation_id, core::ApiCategory category);
  void Work(uint64_t correlation_id, uint32_t device, uint32_t stream, uint64_t start, uint64_t end, WorkKind kind);

  // The requests whose scope ended at or before `horizon`, in the order of their ends; a batch
  // scope's shares go to its requests and it is not returned itself.
  std::vector<RequestFigures> Finalize(uint64_t horizon);
  // Every scope that ended (the session's end); scopes still open are counted as unfinished.
  std::vector<RequestFigures> FinalizeAll();

  std::string_view RouteName(uint32_t route) const;
  size_t route_count() const { return routes_.size(); }  // route ids are 1 .. route_count()

  uint64_t dropped_scopes() const { return dropped_scopes_; }    // over max_open_scopes
  // Scopes that never ended: open at the end, or open longer than history_ns.
  uint64_t unfinished_scopes() const { return unfinished_scopes_; }
  uint64_t batch_shares_unclaimed() const { return shares_unclaimed_; }  // a batch naming a request that never ended

 private:
  struct Operation {
    uint32_t stream = 0;
    uint64_t ready = 0;  // its call's end
    uint64_t start = 0, end = 0;
  };
  struct Owner {
    uint64_t serial = 0;
    uint64_t call_end = 0;
  };
  struct CallPiece {
    uint64_t begin = 0, end = 0;
    core::HostCause cause = core::HostCause::kOutsideCuda;
  };
  struct Scope {
    uint64_t serial = 0;
    uint64_t parent = 0;  // the scope of its thread it opened inside (0: none)
    uint64_t thread = 0;
    uint64_t start = 0;
    uint64_t end = 0;  // 0: open
    uint64_t id = 0;
    bool batch = false;
    uint32_t route = 0;
    std::vector<uint64_t> members;
    std::vector<uint64_t> correlations;
    std::vector<CallPiece> calls;  // of its thread inside its span (a request's only)
    std::vector<Operation> operations;
    double gpu_ns = 0;
    uint64_t kernels = 0;
    double copy_ns = 0;
    uint64_t copies = 0;
    uint64_t first_launch = 0;
    uint64_t first_work = 0;
    uint32_t device = 0;
  };
  // A batch's share waiting for its request's end.
  struct Share {
    double gpu_ns = 0;
    uint64_t kernels = 0;
    double copy_ns = 0;
    uint64_t copies = 0;
    uint64_t first_launch = 0;
    uint64_t first_work = 0;
    uint32_t device = 0;
    uint32_t batches = 0;
    uint64_t latest_end = 0;
    std::vector<intervals::Interval> waits;
  };

  uint32_t InternRoute(std::string_view route);
  Scope* Open(uint64_t thread, uint64_t start, uint64_t id, bool batch, std::string_view route,
              std::span<const uint64_t> members);
  void Retire(const Scope& s);
  // The innermost scope of `thread` holding `time` (its live scopes by start: a binary search, then
  // up the parents), or null.
  Scope* Innermost(uint64_t thread, uint64_t time);
  void ShareBatch(const Scope& s);
  // The stretches the scope's operations waited, as a set.
  static intervals::IntervalSet Waits(const Scope& s);
  RequestFigures Figures(const Scope& s, const absl::flat_hash_map<uint32_t, intervals::IntervalSet>& busy,
                         const intervals::IntervalSet& any_busy);
  std::vector<RequestFigures> FinalizeUpTo(uint64_t horizon, bool all);
  void PruneHistory(uint64_t horizon);

  Options options_;
  std::vector<std::string> routes_;
  uint64_t next_serial_ = 1;
  absl::flat_hash_map<uint64_t, Scope> scopes_;                   // by serial
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> threads_;  // thread -> live serials, by start
  absl::flat_hash_map<uint64_t, Owner> owner_;                    // correlation id -> its scope
  absl::flat_hash_map<uint32_t, std::vector<intervals::Interval>> history_;  // device -> operations
  absl::flat_hash_map<uint64_t, Share> shares_;                   // request id -> batch shares
  uint64_t dropped_scopes_ = 0;
  uint64_t unfinished_scopes_ = 0;
  uint64_t shares_unclaimed_ = 0;
};

}  // namespace cuscope::requests

#endif  // CUSCOPE_LIB_REQUESTS_REQUEST_LEDGER_H_
