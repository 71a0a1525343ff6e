// The in-process timeline collector: CUPTI activity buffers in, a trace file out.
//
// CUPTI fills buffers from a pool with a hard cap; completed buffers go to a writer thread that
// translates, encodes and writes them, so CUPTI's callback path only queues a pointer. CUPTI's
// periodic flush keeps the file at most about a second behind the program.
//
// One collector per process (CUPTI allows one subscriber). Every entry point returns a Status and
// never throws; a failure leaves the program running without profiling.
//
// The collector is four rooms: this file starts, stops and flushes a session and routes CUPTI's
// callbacks; trace_pipeline.h writes (buffer queue, chunks); capture_controller.h decides when
// activity is recorded (windows, control thread, the top-down's choice); sampling_controller.h runs
// the GPU counters over time. CUPTI and the driver are reached through cupti_api.h.
#ifndef CUSCOPE_LIB_CUPTI_ACTIVITY_COLLECTOR_H_
#define CUSCOPE_LIB_CUPTI_ACTIVITY_COLLECTOR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuscope/v1/control.pb.h"
#include "lib/settings/config.h"

namespace cuscope::cupti {

class CuptiApi;

struct CollectorSummary {
  std::string path;
  uint64_t records = 0;
  uint64_t kernels = 0;
  uint64_t bytes = 0;
  uint64_t dropped = 0;
  uint64_t buffers_refused = 0;
  uint64_t launches_profiled = 0;  // kernel launches replayed for metrics
  uint64_t launch_stacks_dropped = 0;  // --stacks: more were waiting for the writer than it keeps
};

// Starts collection into the file `config.output` names (monitor mode: none when it is empty). `entry` says how cuscope was started
// ("injection", "preload", "session"). Fails if a collector is already active.
absl::Status StartCollector(const settings::Config& config, const std::string& entry);
// The same, reaching CUPTI and the driver through `cupti` (tests pass a fake). `cupti` must stay
// alive for the rest of the process: CUPTI may call back after a session stopped.
absl::Status StartCollector(const settings::Config& config, const std::string& entry, CuptiApi& cupti);

// Stops collection, writes everything CUPTI still holds and closes the file.
absl::Status StopCollector(CollectorSummary* summary);

// Hands every buffer CUPTI holds to the writer now.
absl::Status FlushCollector();

// A session started late (attached) checks that CUPTI's records reach it: after `seconds`, a flush;
// FailedPrecondition when the callbacks timed at least `min_calls` calls of the program and no
// kernel record arrived (another CUPTI client in the process, a running torch.profiler, receives
// them). OK when too few calls were made to tell, or without timed calls (--lean-calls records).
absl::Status CheckCollectorReceivesRecords(double seconds, uint64_t min_calls = 50);

bool CollectorActive();
std::string CollectorOutputPath();

// Monitor mode: every record also goes to the trace file for `seconds` (0 = until closed), the
// figures going on. FailedPrecondition without an active monitor session with a file, or with a
// window open.
absl::Status OpenCollectorTraceWindow(double seconds);
absl::Status CloseCollectorTraceWindow();
// Flight mode: writes the last seconds kept (and, with `after_seconds`, that many more) to `path`,
// or to the session's output name with the lowest free number. Returns once the file is created;
// a snapshot thread writes it and says so in one line. FailedPrecondition outside flight mode or
// while another snapshot is being written.
absl::Status SnapshotCollector(const std::string& path, double after_seconds);
// Flight mode with a step threshold: a step of `seconds` above it starts a snapshot (as above,
// named by the output, holding the configured seconds after). True when one started; false below
// the threshold, without one, or while a snapshot is being written.
absl::StatusOr<bool> MarkCollectorStep(double seconds);
// What a control-socket capture asks for (proto/cuscope/v1/control.proto).
struct CaptureSpec {
  std::string path;  // absolute
  double seconds = 0;
  // Flight mode's ring plus `seconds` after; otherwise the next `seconds` alone (monitor or
  // flight mode).
  bool snapshot = false;
  bool force_overwrite = false;
  // Monitor mode's window only: then kernel metrics on the next `top_down_launches` launches of
  // its `top_down_kernels` hottest kernels, waited for at most `top_down_wait_seconds`, in the
  // same file (the one-run top-down). 0 kernels: none.
  uint32_t top_down_kernels = 0;
  uint64_t top_down_launches = 3;
  double top_down_wait_seconds = 10;
};
// Starts a capture; returns once its file is created. FailedPrecondition in a mode that cannot
// (trace mode; a snapshot outside flight mode) or while another capture or snapshot is written.
absl::Status CaptureCollector(const CaptureSpec& spec);
// What `cuscope status` shows of the active session; FailedPrecondition without one.
absl::StatusOr<v1::ProcessStatus> CollectorStatus();

// Request and batch scopes (include/cuscope/request.h) on the calling thread; nothing without an
// active session. Never blocks on the session's lifecycle: called on the program's hot path.
void BeginCollectorScope(uint64_t id, const char* route, const uint64_t* batch_requests, size_t batch_count,
                         bool batch);
void EndCollectorScope(bool batch);

// The Prometheus endpoint's port (0: none).
int CollectorPrometheusPort();

// Called in the child after fork(): the child neither writes nor flushes the parent's trace.
void MarkCollectorForkedChild();

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_ACTIVITY_COLLECTOR_H_
