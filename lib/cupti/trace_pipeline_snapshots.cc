// TracePipeline's snapshots and captures: a flight recorder's last seconds, or a monitor-mode
// capture's next seconds (with its one-run top-down), taken from the writer at their turn in its
// queue and written to a file by a thread of their own, so that neither the program's threads nor
// the writer wait on the disk.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/cupti/trace_pipeline.h"

namespace cuscope::cupti {

// ---- Flight mode: snapshots --------------------------------------------------------------------

absl::Status TracePipeline::RequestSnapshot(const std::string& path, double after_seconds, bool force_overwrite,
                                            std::function<void(const absl::Status&, const std::string&)> done) {
  if (!flight_recording()) return absl::FailedPreconditionError("a snapshot needs flight mode (CUSCOPE_MODE=flight)");
  SnapshotRequest request;
  request.path = path;
  request.after_seconds = after_seconds;
  request.force_overwrite = force_overwrite;
  request.what = "snapshot";
  return StartSnapshot(std::move(request), std::move(done));
}

absl::Status TracePipeline::RequestCapture(const std::string& path, double seconds, bool force_overwrite,
                                           CaptureTopDown top_down,
                                           std::function<void(const absl::Status&, const std::string&)> done) {
  if (!monitoring() && !flight_recording()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the process writes every record to ", this->path(), " already (trace mode): a capture needs monitor or "
        "flight mode"));
  }
  if (!(seconds > 0)) return absl::InvalidArgumentError("a capture needs its seconds");
  if (top_down.kernels > 0) {
    if (!monitoring()) {
      return absl::FailedPreconditionError(
          "a top-down capture needs monitor mode (CUSCOPE_MODE=monitor): flight mode's recorder holds the seconds "
          "before the request, and its kernel metrics would come after them");
    }
    if (!hooks_.kernel_metrics_phase) {
      return absl::FailedPreconditionError("this session cannot collect kernel metrics");
    }
    if (top_down.launches_each == 0 || !(top_down.wait_seconds >= 0)) {
      return absl::InvalidArgumentError("a top-down capture needs launches to profile and a wait of 0 s or more");
    }
  }
  SnapshotRequest request;
  request.path = path;
  request.after_seconds = seconds;
  request.force_overwrite = force_overwrite;
  request.what = "capture";
  request.since_ns = cupti_.Timestamp();
  if (flight_recording()) {
    const double span = config_.flight_span_ms / 1000.0;
    if (seconds > span) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a capture of %.3g s would lose its start: the flight recorder keeps %.3g s (CUSCOPE_FLIGHT_SPAN)", seconds,
          span));
    }
    return StartSnapshot(std::move(request), std::move(done));
  }
  // Monitor mode: the writer keeps chunks from its turn in the queue on, and a window makes the
  // records of the next seconds into chunks.
  request.monitor_window = true;
  request.top_down = top_down;
  return StartSnapshot(std::move(request), std::move(done));
}

absl::Status TracePipeline::StartSnapshot(SnapshotRequest request,
                                          std::function<void(const absl::Status&, const std::string&)> done) {
  // Caller: the control thread, running a trigger's Snapshot or Capture command (capture_controller.h);
  // FinishWriting closes the door under the same lock.
  std::lock_guard<std::mutex> start_lock(snapshot_start_mu_);
  if (snapshots_closed_ || !thread_.joinable()) return absl::FailedPreconditionError("the session is not recording");
  if (snapshot_busy_.exchange(true)) {
    return absl::FailedPreconditionError(
        absl::StrCat("a ", snapshot_what_, " is being written; this ", request.what, " is refused"));
  }
  if (request.monitor_window && trace_window_.load()) {
    snapshot_busy_.store(false);
    return absl::FailedPreconditionError("a trace window is open; a capture waits until it closes");
  }
  snapshot_what_ = request.what;
  auto writer = core::TraceWriter::Create(request.path, request.force_overwrite);
  if (!writer.ok()) {
    snapshot_busy_.store(false);
    return writer.status();
  }
  if (snapshot_thread_.joinable()) snapshot_thread_.join();  // the last one, finished
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    snapshot_hurry_ = false;
    snapshot_taken_.reset();
  }
  if (request.monitor_window) {
    inbox_.PushTurn(BeginCaptureTurn{});
    if (auto st = OpenWindow(0, "capture"); !st.ok()) {
      ::unlink(request.path.c_str());
      snapshot_busy_.store(false);
      return st;
    }
    capture_window_.store(true);
  }
  try {
    snapshot_thread_ = std::thread(&TracePipeline::SnapshotLoop, this, *std::move(writer), request, std::move(done));
  } catch (const std::system_error& e) {
    if (request.monitor_window) {
      capture_window_.store(false);
      (void)CloseWindow("capture");
    }
    ::unlink(request.path.c_str());
    snapshot_busy_.store(false);
    return absl::ResourceExhaustedError(absl::StrCat("cannot start the snapshot thread: ", e.what()));
  }
  return absl::OkStatus();
}

void TracePipeline::SnapshotLoop(std::unique_ptr<core::TraceWriter> writer, SnapshotRequest request,
                                 std::function<void(const absl::Status&, const std::string&)> done) {
  const std::string path = writer->path();
  {
    std::unique_lock<std::mutex> lock(snapshot_mu_);
    snapshot_cv_.wait_for(lock, std::chrono::duration<double>(request.after_seconds),
                          [this] { return snapshot_hurry_; });
    snapshot_since_ns_ = request.since_ns;
  }
  if (request.monitor_window) {
    capture_window_.store(false);
    (void)CloseWindow("capture");
  }
  std::string top_down_said;
  if (request.top_down.kernels > 0) top_down_said = RunCaptureTopDown(request.top_down);
  // The records CUPTI holds in completed buffers, then the ring's contents at their turn.
  (void)cupti_.FlushAll(false);
  inbox_.PushTurn(SnapshotTurn{});
  std::pair<v1::Header, core::FlightRing::Snapshot> taken;
  {
    std::unique_lock<std::mutex> lock(snapshot_mu_);
    snapshot_cv_.wait(lock, [this] { return snapshot_taken_.has_value(); });
    taken = std::move(*snapshot_taken_);
    snapshot_taken_.reset();
  }
  absl::Status st = core::WriteFlightSnapshot(taken.first, taken.second, *writer);
  std::string line;
  if (st.ok()) {
    const auto& s = taken.second;
    uint64_t bytes = writer->bytes_written();
    line = absl::StrCat(request.what, " written to ", path, " (", s.chunks.size(), " chunks, ",
                        absl::StrFormat("%.1f", (s.last_time_ns - s.first_time_ns) / 1e9), " s, ", bytes, " bytes",
                        top_down_said, ")");
  } else {
    writer.reset();
    ::unlink(path.c_str());  // a partial snapshot would read as a cut trace: none at all
    line = absl::StrCat(request.what, " to ", path, " lost: ", st.message(), "; recording goes on");
  }
  if (done) done(st, line);
  snapshot_busy_.store(false);
}

std::string TracePipeline::RunCaptureTopDown(const CaptureTopDown& top_down) {
  using Clock = std::chrono::steady_clock;
  // The counters over time give the GPU's counters back first: the Range Profiler needs them.
  const bool metrics_on = hooks_.kernel_metrics_phase(true);
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    capture_top_down_ = true;
    capture_choice_made_ = false;
  }
  // The window's records, partly filled buffers too: in monitor mode the kinds stay on, so the
  // program's kernels after the window keep CUPTI's buffers open, and a default flush would hand
  // over nothing of the window. What a forced flush hands over without timestamps started after
  // the window, which the capture leaves out anyway.
  (void)cupti_.FlushAll(true);
  QueueHotKernelChoice(top_down.kernels, metrics_on ? top_down.launches_each : 0);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::max(top_down.wait_seconds, 0.0)));
  size_t chosen = 0;
  uint64_t expected = 0, profiled = 0;
  bool chose = false;
  {
    std::unique_lock<std::mutex> lock(snapshot_mu_);
    // The writer makes the choice at its turn, behind the window's records: never long.
    snapshot_cv_.wait(lock, [this] { return capture_choice_made_ || snapshot_hurry_; });
    chose = capture_choice_made_;
    snapshot_cv_.wait_until(lock, deadline, [this] {
      return snapshot_hurry_ || profiled_since_choice_ >= capture_launches_expected_;
    });
    capture_top_down_ = false;
    chosen = capture_kernels_chosen_;
    expected = capture_launches_expected_;
    profiled = std::min(profiled_since_choice_, expected);
  }
  if (metrics_on) (void)hooks_.kernel_metrics_phase(false);
  if (!chose) return "; top-down: the session ended before its choice";
  if (chosen == 0) return "; top-down: no kernel ran in the window";
  if (!metrics_on) return absl::StrCat("; top-down: ", chosen, " hot kernels named, no kernel metrics");
  return absl::StrCat("; top-down: ", profiled, " of ", expected, " launches of ", chosen, " hot kernels profiled");
}

// On the writer thread, at the snapshot's turn: what is pending becomes a chunk first.
void TracePipeline::TakeSnapshot() {
  // The calls and scopes queued before the marker are in it too (a slow request's own record was
  // queued just before the request for its snapshot).
  if (timed_.Waiting()) {
    ProcessBuffer(CompletedBuffer{});  // writes the chunk
  } else {
    WriteChunk(false);
  }
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    snapshot_taken_.emplace(header_, destination_->ring()->Take(snapshot_since_ns_));
  }
  snapshot_cv_.notify_all();
  if (monitor_destination_ != nullptr) monitor_destination_->set_capturing(false);  // the capture is over
}

void TracePipeline::JoinSnapshotThread() {
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    snapshot_hurry_ = true;
  }
  snapshot_cv_.notify_all();
  if (snapshot_thread_.joinable()) snapshot_thread_.join();
}

}  // namespace cuscope::cupti
