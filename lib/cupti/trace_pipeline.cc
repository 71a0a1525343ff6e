#include "lib/cupti/trace_pipeline.h"

#include <chrono>
#include <cstdlib>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cuscope::cupti {
namespace {

using SteadyClock = std::chrono::steady_clock;

uint64_t NanosecondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count();
}

}  // namespace

TracePipeline::TracePipeline(const core::Config& config, CuptiApi& cupti, std::unique_ptr<core::TraceWriter> writer,
                             v1::Header header, std::function<void(const std::string&)> warn, Hooks hooks)
    : config_(config),
      cupti_(cupti),
      writer_(std::move(writer)),
      header_(std::move(header)),
      warn_(std::move(warn)),
      hooks_(std::move(hooks)),
      pool_(config.buffer_bytes, config.buffer_pool_cap_bytes),
      builder_([&cupti](v1::ApiDomain domain, uint32_t cbid) { return cupti.CallbackName(domain, cbid); }) {}

TracePipeline::~TracePipeline() {
  if (thread_.joinable()) FinishWriting();
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
  v1::Chunk().Swap(&chunk_);
}

void TracePipeline::FinishWriting() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    exit_requested_ = true;
  }
  queue_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// ---- CUPTI's callback path: count, take or queue, nothing else ----------------------------------

uint8_t* TracePipeline::AcquireBuffer() {
  buffers_requested_.fetch_add(1, std::memory_order_relaxed);
  return pool_.Acquire();
}

void TracePipeline::BufferCompleted(uint8_t* buffer, size_t valid) {
  buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_.push_back({buffer, valid});
  }
  queue_cv_.notify_one();
}

// ---- What the other rooms queue ----------------------------------------------------------------

void TracePipeline::QueueWindow(bool open, uint64_t time, const std::string& reason, v1::WindowKind kind) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  windows_.push_back({open, time, reason, kind});
}

void TracePipeline::QueueProfiledLaunch(ProfiledLaunch launch) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    profiled_.push_back(std::move(launch));
  }
  queue_cv_.notify_one();
}

void TracePipeline::QueueCounterBatches(std::vector<CounterBatch> batches) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    for (auto& b : batches) counter_batches_.push_back(std::move(b));
  }
  queue_cv_.notify_one();
}

void TracePipeline::QueueHotKernelChoice() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_.push_back({nullptr, 0, true});
  }
  queue_cv_.notify_one();
}

// ---- The writer thread -------------------------------------------------------------------------

void TracePipeline::WriterLoop() {
  while (true) {
    QueuedBuffer b{};
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return !queue_.empty() || exit_requested_ || !counter_batches_.empty(); });
      if (queue_.empty()) {
        if (exit_requested_) break;  // every buffer written; the last chunk takes the rest
        lock.unlock();
        WriteChunk(false);  // GPU counter samples alone, so they reach the file while the program is quiet
        continue;
      }
      b = queue_.front();
      queue_.pop_front();
    }
    if (b.choose_hot_kernels) {
      ChooseHotKernels();
      continue;
    }
    ProcessBuffer(b);
  }
  WriteChunk(true);
  if (!failed()) state_.store(State::kFinished);
}

void TracePipeline::ProcessBuffer(const QueuedBuffer& b) {
  const auto t0 = SteadyClock::now();
  if (!failed()) {
    TakeProfiled();
    const ReplayedLaunches* replayed = replayed_.empty() ? nullptr : &replayed_;
    CUpti_Activity* record = nullptr;
    while (cupti_.NextRecord(b.buffer, b.valid, &record)) {
      TranslateActivity(*record, builder_, replayed);
      if (record->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) {
        // CUPTI hands ownership of the overhead details to the client.
        std::free(reinterpret_cast<CUpti_ActivityOverhead3*>(record)->overheadData);
      }
    }
  }
  pool_.Release(b.buffer);
  writer_ns_ += NanosecondsSince(t0);
  WriteChunk(false);
}

// Made once every buffer of the top-down's timeline window has been translated.
void TracePipeline::ChooseHotKernels() {
  auto chosen = core::SelectHotKernels(builder_.KernelTotals(), config_.top_down_kernels);
  builder_.AddTopDownSelection(cupti_.Timestamp(), builder_.total_kernel_ns(), chosen);
  if (hooks_.hot_kernels_chosen) hooks_.hot_kernels_chosen(std::move(chosen));
  WriteChunk(false);
}

// Moves the launches profiled since the last call to the writer's side, so the kernel records of
// those launches are known as replayed before they are translated.
void TracePipeline::TakeProfiled() {
  std::vector<ProfiledLaunch> profiled;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    profiled.swap(profiled_);
  }
  for (auto& p : profiled) {
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
  if (auto sys = cupti_.QuerySystem(); sys.ok()) {
    for (const auto& d : sys->devices) *header_.add_devices() = d;
    header_.mutable_session()->set_driver_version(sys->driver_version);
    header_.mutable_session()->set_runtime_version(sys->runtime_version);
    if (config_.gpu_metrics && config_.gpu_metrics_devices.empty()) {
      for (const auto& d : sys->devices) header_.mutable_config()->add_sampled_devices(d.id());
    }
  }
  if (auto st = writer_->WriteHeader(header_); !st.ok()) {
    Fail(absl::StrCat(st.message(), "; profiling stopped"));
    return false;
  }
  state_.store(State::kWriting);
  return true;
}

// Windows, counter samples and profiled launches queued since the last chunk.
void TracePipeline::AddQueuedExtras(bool* had_windows) {
  std::vector<QueuedWindow> windows;
  std::vector<CounterBatch> batches;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    windows.swap(windows_);
    batches.swap(counter_batches_);
  }
  *had_windows = !windows.empty();
  for (const auto& w : windows) builder_.AddWindow(w.kind, w.open ? w.time : 0, w.open ? 0 : w.time, w.reason);
  for (const auto& b : batches) builder_.AddCounterSeries(b.device, b.source, b.name, b.points);
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
  // bytes_written counts what was on disk before this chunk.
  st->set_bytes_written(writer_->bytes_written());
}

void TracePipeline::WriteChunk(bool final_chunk) {
  if (failed()) {
    // Nothing more is written: counter samples still arriving are dropped here, or the writer
    // would wake for them again and again.
    std::lock_guard<std::mutex> lock(queue_mu_);
    counter_batches_.clear();
    return;
  }
  if (!WriteHeaderIfPending()) return;
  bool had_windows = false;
  AddQueuedExtras(&had_windows);
  if (builder_.pending_records() == 0 && !had_windows && !final_chunk) return;
  records_written_ += builder_.pending_records();
  builder_.TakeChunk(&chunk_);
  kernels_written_ += chunk_.kernels().duration_size();
  FillCaptureStats(chunk_.mutable_stats());
  if (auto ws = writer_->WriteChunk(chunk_); !ws.ok()) {
    Fail(absl::StrCat(ws.message(), "; profiling stopped, the trace keeps what was written before"));
    return;
  }
  ++chunks_written_;
}

}  // namespace cuscope::cupti
