#include "lib/cupti/trace_pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/cupti/trace_header.h"
#include "lib/cupti/launch_callbacks.h"

namespace cuscope::cupti {
namespace {

using SteadyClock = std::chrono::steady_clock;

uint64_t NanosecondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count();
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count();
}

}  // namespace

TracePipeline::TracePipeline(const settings::Config& config, CuptiApi& cupti, std::unique_ptr<core::TraceWriter> writer,
                             v1::Header header, std::function<void(const std::string&)> warn, Hooks hooks)
    : config_(config),
      cupti_(cupti),
      writer_(std::move(writer)),
      header_(std::move(header)),
      warn_(std::move(warn)),
      hooks_(std::move(hooks)),
      pool_(config.buffer_bytes, config.buffer_pool_cap_bytes),
      builder_([&cupti](v1::ApiDomain domain, uint32_t cbid) { return cupti.CallbackName(domain, cbid); }),
      stack_interner_(builder_) {
  // The mode chosen once: its figures, where chunks go, and the sinks records go through.
  figures_ = ModeFigures::ForMode(config, cupti, {.intervals_closed = hooks_.intervals_closed, .gpu_idle = hooks_.gpu_idle});
  if (config.mode == settings::CollectionMode::kFlight) {
    auto ring = std::make_unique<FlightRingDestination>(core::FlightRingOptions{
        .span_ns = static_cast<uint64_t>(config.flight_span_ms) * 1'000'000ull, .max_bytes = config.flight_size_bytes});
    flight_ring_ = ring.get();
    destination_ = std::move(ring);
    if (!config.flight_step_range.empty() && config.flight_step_threshold_ms > 0) {
      step_watch_ = std::make_unique<core::StepRangeWatch>(
          config.flight_step_range, static_cast<uint64_t>(config.flight_step_threshold_ms) * 1'000'000ull);
    }
  } else if (monitoring()) {
    auto destination = std::make_unique<MonitorDestination>(config.flight_size_bytes, writer_.get());
    monitor_destination_ = destination.get();
    destination_ = std::move(destination);
  } else if (writer_ != nullptr) {
    destination_ = std::make_unique<FileDestination>(*writer_);
  }
  route_ = std::make_unique<RecordRoute>(config.mode, builder_, figures_ != nullptr ? &figures_->aggregator() : nullptr,
                                         step_watch_.get(), hooks_.slow_step_range);
}

TracePipeline::~TracePipeline() {
  if (thread_.joinable()) FinishWriting();
  JoinSnapshotThread();
}

absl::Status TracePipeline::StartWriting() {
  try {
    thread_ = std::thread(&TracePipeline::WriterLoop, this);
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot start the writer thread: ", e.what()));
  }
  return absl::OkStatus();
}

void TracePipeline::ReleaseMemory() {
  pool_.FreeSpare();
  timed_.ReleaseMemory();
  v1::Chunk().Swap(&chunk_);
}

void TracePipeline::FinishWriting() {
  // No snapshot starts from now on (the control thread, which starts them, has stopped by now; the
  // door closes all the same), and one waiting out its seconds after the request writes now, while
  // the writer runs.
  {
    std::lock_guard<std::mutex> lock(snapshot_start_mu_);
    snapshots_closed_ = true;
  }
  JoinSnapshotThread();
  inbox_.RequestExit();
  if (thread_.joinable()) thread_.join();
}

// ---- CUPTI's callback path: count, take or queue, nothing else ----------------------------------

uint8_t* TracePipeline::AcquireBuffer() {
  buffers_requested_.fetch_add(1, std::memory_order_relaxed);
  return pool_.Acquire();
}

void TracePipeline::BufferCompleted(uint8_t* buffer, size_t valid) {
  buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  if (buffer != nullptr) buffers_queued_.fetch_add(1, std::memory_order_release);
  inbox_.PushTurn(CompletedBuffer{buffer, valid});
}

bool TracePipeline::WaitBuffersWalked(std::chrono::milliseconds wait) {
  const uint64_t queued = buffers_queued_.load(std::memory_order_acquire);
  const auto deadline = SteadyClock::now() + wait;
  inbox_.Wake();
  // Polled: the writer's turn takes a buffer's walk at most (milliseconds), and this wait happens
  // once per duty cycle window, on the control thread.
  while (buffers_walked_.load(std::memory_order_acquire) < queued) {
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// ---- What the other rooms queue ----------------------------------------------------------------

void TracePipeline::QueueWindow(bool open, uint64_t time, const std::string& reason, v1::WindowKind kind) {
  inbox_.AddWindow({.open = open, .time = time, .reason = reason, .kind = kind});
}

void TracePipeline::QueueSampleEdge(bool open, uint64_t time, double weight) {
  if (figures_ != nullptr) figures_->QueueSampleEdge(open, time, weight);
}

void TracePipeline::QueueProfiledLaunch(ProfiledLaunch launch) {
  inbox_.AddProfiled(std::move(launch));
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    ++profiled_since_choice_;
  }
  snapshot_cv_.notify_all();  // a capture's top-down may be waiting for this launch
}

void TracePipeline::QueueLaunchStack(uint64_t correlation_id, const uintptr_t* return_addresses, size_t n,
                                     std::vector<process::PythonFrame> python) {
  QueuedStack stack;
  stack.correlation_id = correlation_id;
  stack.return_addresses.assign(return_addresses, return_addresses + n);
  stack.python = std::move(python);
  (void)inbox_.AddLaunchStack(std::move(stack));  // dropped at the bound, and counted
}

void TracePipeline::QueueGraphNodeStack(uint64_t node_id, const uintptr_t* return_addresses, size_t n,
                                        std::vector<process::PythonFrame> python, uint64_t created_ns, uint64_t tid) {
  QueuedStack stack;
  stack.graph_node_id = node_id;
  stack.created_ns = created_ns;
  stack.tid = tid;
  stack.return_addresses.assign(return_addresses, return_addresses + n);
  stack.python = std::move(python);
  inbox_.AddGraphNodeStack(std::move(stack));
}

void TracePipeline::QueueGraphNodeClone(uint64_t node_id, uint64_t original_node_id) {
  QueuedStack clone;
  clone.graph_node_id = node_id;
  clone.original_node_id = original_node_id;
  inbox_.AddGraphNodeStack(std::move(clone));
}

// Writer thread: the stacks queued since the last chunk.
void TracePipeline::AddQueuedStacks() { stack_interner_.Add(inbox_.TakeStacks()); }

void TracePipeline::QueueCounterBatches(std::vector<CounterBatch> batches) { inbox_.AddCounterBatches(std::move(batches)); }

void TracePipeline::QueueHotKernelChoice(uint32_t kernels, uint64_t launches_each) {
  inbox_.PushTurn(ChooseHotKernelsTurn{kernels, launches_each});
}

void TracePipeline::QueueTimedCall(const core::ApiActivity* call, const core::SyncRecord* sync) {
  // On the program's thread, before the lock: the duty cycle counts the kernel launches apart.
  const bool launch =
      call != nullptr &&
      ((call->domain == v1::API_DOMAIN_DRIVER && IsDriverLaunchCallback(call->callback_id)) ||
       (call->domain == v1::API_DOMAIN_RUNTIME && IsRuntimeLaunchCallback(call->callback_id)));
  const TimedCallQueue::Added added = timed_.Add(call, sync, launch);
  if (added == TimedCallQueue::Added::kRefused) dropped_by_cupti_.fetch_add(1, std::memory_order_relaxed);
  if (added == TimedCallQueue::Added::kBatchReady) inbox_.MarkTimedBatchReady();
}

void TracePipeline::QueueRequestScope(const core::RequestScopeActivity& scope) {
  if (!request_scopes_seen_.load(std::memory_order_relaxed) && !request_scopes_seen_.exchange(true) &&
      hooks_.every_record_wanted) {
    hooks_.every_record_wanted();
  }
  if (!timed_.AddScope(scope)) dropped_by_cupti_.fetch_add(1, std::memory_order_relaxed);
}

// ---- The writer thread -------------------------------------------------------------------------

struct TracePipeline::TurnRunner {
  TracePipeline& p;
  void operator()(const CompletedBuffer& b) const { p.ProcessBuffer(b); }
  void operator()(const ChooseHotKernelsTurn& t) const { p.ChooseHotKernels(t.kernels, t.launches_each); }
  void operator()(const SnapshotTurn&) const { p.TakeSnapshot(); }
  void operator()(const BeginCaptureTurn&) const {
    p.monitor_destination_->set_capturing(true);
    p.builder_.ResetKernelTotals();  // a top-down capture chooses among this window's kernels
  }
};

void TracePipeline::WriterLoop() {
  // Monitor mode wakes at least this often, so intervals close and reach Prometheus when the
  // program is quiet too.
  const auto tick = std::chrono::milliseconds(std::clamp<uint32_t>(config_.monitor_interval_ms / 4, 10, 250));
  const std::optional<std::chrono::milliseconds> wait_at_most =
      figures_ != nullptr ? std::optional<std::chrono::milliseconds>(tick) : std::nullopt;
  while (true) {
    const WriterInbox::Next next = inbox_.Wait(wait_at_most);
    if (next.exit) break;  // every buffer written; the last chunk takes the rest
    // Without a turn, timed calls alone: a batch of them, or, for monitor and flight modes'
    // intervals, any at a tick (so an interval does not close before the calls made in it arrive).
    if (next.turn.has_value()) {
      std::visit(TurnRunner{*this}, *next.turn);
    } else if (inbox_.TakeTimedBatchReady() || (figures_ != nullptr && timed_.Waiting())) {
      ProcessBuffer(CompletedBuffer{});
    } else {
      WriteChunk(false);  // GPU counter samples alone, so they reach the file while the program is quiet
    }
    CloseExpiredTraceWindow();
    if (figures_ != nullptr) CloseIntervals(false);
  }
  if (timed_.Waiting()) ProcessBuffer(CompletedBuffer{});  // the last timed calls
  if (figures_ != nullptr) CloseIntervals(true);
  WriteChunk(true);
  if (!failed()) state_.store(State::kFinished);
}

void TracePipeline::ProcessBuffer(const CompletedBuffer& b) {
  const auto t0 = SteadyClock::now();
  // Before the buffer's records: the launches profiled so far (their kernel records are replays)
  // and the duty cycle's window edges. After a failed write the trace takes nothing more; monitor
  // mode's figures go on (the route says where the records go).
  if (figures_ != nullptr) figures_->ApplySampleEdges();
  if (core::ActivitySink* sink = route_->SinkForBuffer(failed()); sink != nullptr) {
    TakeProfiled();
    TranslateBuffer(b, *sink);
  } else {
    timed_.Discard();  // the trace takes nothing more: the timed calls waiting are let go, not kept to the cap
  }
  if (b.buffer != nullptr) {
    pool_.Release(b.buffer);
    buffers_walked_.fetch_add(1, std::memory_order_release);
  }
  writer_ns_ += NanosecondsSince(t0);
  WriteChunk(false);
}

void TracePipeline::TranslateBuffer(const CompletedBuffer& b, core::ActivitySink& sink) {
  timed_.DrainTo(sink);
  if (b.buffer == nullptr) return;
  // Walking a buffer is CUPTI calls: none while CUPTI is detached or being detached (a buffer CUPTI
  // completes as it finalizes would otherwise be walked against a CUPTI half torn down).
  if (walk_gate_ != nullptr && !walk_gate_->Enter()) {
    buffers_not_walked_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  struct LeaveGate {
    CuptiGate* gate;
    ~LeaveGate() {
      if (gate != nullptr) gate->Leave();
    }
  } leave{walk_gate_};
  const ReplayedLaunches* replayed = replayed_.empty() ? nullptr : &replayed_;
  CUpti_Activity* record = nullptr;
  while (cupti_.NextRecord(b.buffer, b.valid, &record)) {
    TranslateActivity(*record, sink, replayed);
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      kernel_records_seen_.fetch_add(1, std::memory_order_relaxed);
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) {
      // CUPTI hands ownership of the overhead details to the client.
      std::free(reinterpret_cast<CUpti_ActivityOverhead3*>(record)->overheadData);
    }
  }
}

// Made once every buffer of the top-down's timeline window has been translated.
void TracePipeline::ChooseHotKernels(uint32_t kernels, uint64_t launches_each) {
  auto chosen = core::SelectHotKernels(builder_.KernelTotals(), kernels);
  builder_.AddTopDownSelection(cupti_.Timestamp(), builder_.total_kernel_ns(), chosen);
  {
    // Before the targets are set, so no profiled launch is counted against an older choice.
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    if (capture_top_down_) {
      capture_top_down_ = false;
      capture_choice_made_ = true;
      capture_kernels_chosen_ = chosen.size();
      capture_launches_expected_ = chosen.size() * launches_each;
      profiled_since_choice_ = 0;
    }
  }
  snapshot_cv_.notify_all();
  if (hooks_.hot_kernels_chosen) hooks_.hot_kernels_chosen(std::move(chosen), launches_each);
  WriteChunk(false);
}

// Moves the launches profiled since the last call to the writer's side, so the kernel records of
// those launches are known as replayed before they are translated.
void TracePipeline::TakeProfiled() {
  for (auto& p : inbox_.TakeProfiled()) {
    replayed_[p.correlation_id] = p.start_ns;
    profiled_pending_.push_back(std::move(p));
  }
}

void TracePipeline::Fail(const std::string& message) {
  state_.store(State::kFailed);
  ++write_errors_;
  warn_(message);
  if (hooks_.write_failed) hooks_.write_failed();
}

// False when the header could not be written.
bool TracePipeline::WriteHeaderIfPending() {
  if (state_.load() != State::kHeaderPending) return true;
  CompleteHeaderOnce();
  if (auto st = destination_->WriteHeader(header_); !st.ok()) {
    Fail(absl::StrCat(st.message(), "; profiling stopped"));
    return false;
  }
  state_.store(State::kWriting);
  return true;
}

void TracePipeline::CompleteHeaderOnce() {
  if (header_complete_) return;
  header_complete_ = true;
  if (auto sys = cupti_.QuerySystem(); sys.ok()) {
    for (const auto& d : sys->devices) *header_.add_devices() = d;
    header_.mutable_session()->set_driver_version(sys->driver_version);
    header_.mutable_session()->set_runtime_version(sys->runtime_version);
    if (config_.gpu_metrics && config_.gpu_metrics_devices.empty()) {
      for (const auto& d : sys->devices) header_.mutable_config()->add_sampled_devices(d.id());
    }
  }
}

// Windows, counter samples and profiled launches queued since the last chunk.
void TracePipeline::AddQueuedExtras(bool* had_windows) {
  const std::vector<QueuedWindow> windows = inbox_.TakeWindows();
  const std::vector<CounterBatch> batches = inbox_.TakeCounterBatches();
  *had_windows = !windows.empty();
  for (const auto& w : windows) builder_.AddWindow(w.kind, w.open ? w.time : 0, w.open ? 0 : w.time, w.reason);
  const bool counters_to_trace = !batches.empty() && route_->counters_reach_trace();
  for (const auto& b : batches) {
    if (figures_ != nullptr && figures_->keeps_counters()) {
      for (const auto& p : b.points) figures_->AddCounter(b.device, b.source, b.name, p);
    }
    if (counters_to_trace) builder_.AddCounterSeries(b.device, b.source, b.name, b.points);
  }
  AddQueuedStacks();
  TakeProfiled();
  std::vector<ProfiledLaunch> profiled;
  profiled.swap(profiled_pending_);
  for (const auto& p : profiled) {
    builder_.AddKernelMetrics(p.correlation_id, p.device, p.kernel_name, p.passes, v1::REPLAY_MODE_KERNEL, p.values,
                              &p.shape);
    // The replay serialized the context for this span: not the program's own timeline.
    builder_.AddWindow(v1::WINDOW_KIND_METRICS, p.start_ns, p.end_ns, "kernel replay");
  }
}

void TracePipeline::FillCaptureStats(v1::CaptureStats* st) {
  st->set_buffers_requested(buffers_requested_.load());
  st->set_buffers_completed(buffers_completed_.load());
  st->set_buffers_refused_at_cap(pool_.refused());
  st->set_launch_stacks_dropped(inbox_.launch_stacks_dropped());
  st->set_records_dropped_by_cupti(dropped_by_cupti_.load());
  st->set_records_written(records_written_);
  st->set_records_untranslated(builder_.untranslated_records());
  st->set_records_incomplete(builder_.incomplete_records());
  st->set_peak_pool_bytes(pool_.peak_bytes());
  st->set_callback_time_ns(callback_ns_.load());
  st->set_writer_time_ns(writer_ns_);
  st->set_cupti_overhead_ns(builder_.overhead_ns());
  st->set_chunks_written(chunks_written_ + 1);
  st->set_write_errors(write_errors_);
  const CounterTotals counters = hooks_.counter_totals ? hooks_.counter_totals() : CounterTotals{};
  st->set_counter_samples(counters.samples);
  st->set_counter_sample_overflows(counters.overflows);
  if (hooks_.attachment_figures) hooks_.attachment_figures(st);
  // bytes_written counts what was on disk before this chunk (none in flight mode: the ring's
  // chunks reach a file only in a snapshot).
  st->set_bytes_written(writer_ != nullptr ? writer_->bytes_written() : 0);
}

void TracePipeline::WriteChunk(bool final_chunk) {
  if (failed()) {
    // Nothing more is written: counter samples still arriving are dropped here, or the writer
    // would wake for them again and again.
    inbox_.DropCounterBatches();
    return;
  }
  if (destination_ == nullptr || !destination_->writes_header()) {
    CompleteHeaderOnce();
  } else if (!WriteHeaderIfPending()) {
    return;
  }
  bool had_windows = false;
  AddQueuedExtras(&had_windows);
  if (builder_.pending_records() == 0 && !had_windows && !final_chunk) return;
  records_written_ += builder_.pending_records();
  builder_.TakeChunk(&chunk_);
  // The clocks read together now and then (and at the end): traces of several hosts are aligned by
  // them over a long run, however the clocks drift apart.
  if (const uint64_t now = cupti_.Timestamp(); now - last_clock_reference_ns_ >= kClockReferencePeriodNs || final_chunk) {
    *chunk_.mutable_clock_reference() = ReadClockReference(cupti_);
    last_clock_reference_ns_ = now;
  }
  kernels_written_ += chunk_.kernels().duration_size();
  FillCaptureStats(chunk_.mutable_stats());
  if (destination_ == nullptr) return;
  absl::StatusOr<bool> kept = destination_->Take(chunk_, cupti_.Timestamp());
  if (!kept.ok()) {
    Fail(absl::StrCat(kept.status().message(), "; profiling stopped, the trace keeps what was written before"));
    return;
  }
  if (*kept) ++chunks_written_;
}

// ---- Monitor and flight modes' figures --------------------------------------------------------

void TracePipeline::CloseIntervals(bool all) {
  core::ChunkBuilder* trace = writer_ != nullptr && !failed() ? &builder_ : nullptr;
  if (figures_->Close(all, dropped_by_cupti_.load(), trace) && !all) WriteChunk(false);  // at the end, the final chunk takes them
}

absl::Status TracePipeline::OpenTraceWindow(double seconds) {
  if (!monitoring()) return absl::FailedPreconditionError("a trace window needs monitor mode");
  if (writer_ == nullptr) return absl::FailedPreconditionError("a trace window needs an output file");
  return OpenWindow(seconds, "trace window");
}

absl::Status TracePipeline::OpenWindow(double seconds, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(window_mu_);
    if (trace_window_.exchange(true)) {
      return absl::FailedPreconditionError(snapshot_busy_.load() ? "a capture is running"
                                                                 : "a trace window is already open");
    }
    trace_window_end_ns_.store(seconds > 0 ? SteadyNowNs() + static_cast<int64_t>(seconds * 1e9) : 0);
    const uint64_t now = cupti_.Timestamp();
    route_->OpenTraceSpan(now);
    QueueWindow(true, now, reason, v1::WINDOW_KIND_TIMELINE);
  }
  Wake();
  if (hooks_.every_record_wanted) hooks_.every_record_wanted();
  return absl::OkStatus();
}

absl::Status TracePipeline::CloseTraceWindow() {
  if (capture_window_.load()) {
    return absl::FailedPreconditionError("the open window is a capture's: it closes when its seconds are over");
  }
  return CloseWindow("trace window");
}

absl::Status TracePipeline::CloseWindow(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(window_mu_);
    if (!trace_window_.exchange(false)) return absl::FailedPreconditionError("no trace window is open");
    trace_window_end_ns_.store(0);
    const uint64_t now = cupti_.Timestamp();
    route_->CloseTraceSpan(now);
    QueueWindow(false, now, reason, v1::WINDOW_KIND_TIMELINE);
  }
  Wake();
  return absl::OkStatus();
}

void TracePipeline::CloseExpiredTraceWindow() {
  const int64_t end = trace_window_end_ns_.load();
  if (end != 0 && SteadyNowNs() >= end && trace_window_.load()) (void)CloseWindow("trace window");
}

}  // namespace cuscope::cupti
