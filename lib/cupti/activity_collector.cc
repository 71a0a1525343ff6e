#include "lib/cupti/activity_collector.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <cupti.h>

#include "absl/strings/str_cat.h"
#include "lib/core/buffer_pool.h"
#include "lib/core/chunk_builder.h"
#include "lib/core/gpu_counters.h"
#include "lib/core/hot_kernels.h"
#include "lib/core/kernel_selection.h"
#include "lib/core/output_name.h"
#include "lib/core/trace_writer.h"
#include "lib/cupti/cupti_status.h"
#include "lib/cupti/device_info.h"
#include "lib/cupti/gpu_counter_sampler.h"
#include "lib/cupti/kernel_metrics_collector.h"
#include "lib/cupti/pm_sampling_config.h"
#include "lib/cupti/translate.h"

namespace cuscope::cupti {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr const char kLibraryVersion[] = "0.1.0";

struct KindMapping {
  const char* name;
  CUpti_ActivityKind kind;
};
constexpr KindMapping kKinds[] = {
    {"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}, {"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
    {"memset", CUPTI_ACTIVITY_KIND_MEMSET},            {"runtime", CUPTI_ACTIVITY_KIND_RUNTIME},
    {"driver", CUPTI_ACTIVITY_KIND_DRIVER},            {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
    {"nvtx", CUPTI_ACTIVITY_KIND_MARKER},              {"memory", CUPTI_ACTIVITY_KIND_MEMORY2},
    {"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD},
};

uint64_t CuptiNow() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

uint64_t MonotonicNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

std::vector<std::string> CommandLine() {
  std::vector<std::string> args;
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(f, arg, '\0')) args.push_back(arg);
  return args;
}

int32_t EnvInt(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (const char* v = std::getenv(n); v != nullptr && *v != '\0') return std::atoi(v);
  }
  return -1;
}

std::string ApiName(v1::ApiDomain domain, uint32_t cbid) {
  const char* name = nullptr;
  const CUpti_CallbackDomain d = domain == v1::API_DOMAIN_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(d, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
    return absl::StrCat(domain == v1::API_DOMAIN_DRIVER ? "driver" : "runtime", "_cbid_", cbid);
  }
  return name;
}

struct CompletedBuffer {
  uint8_t* buffer;
  size_t valid;
  // Not a buffer: the top-down's turn to choose its hot kernels, queued behind every buffer of
  // its timeline window.
  bool choose_hot_kernels = false;
};

struct PendingWindow {
  bool open;  // true: a window starts, false: the open window ends
  uint64_t time;
  std::string reason;
  v1::WindowKind kind = v1::WINDOW_KIND_TIMELINE;
};

// Everything one collection session owns. Allocated at start and never freed: CUPTI may call a
// buffer callback late, and a dangling state would crash the program.
struct State {
  core::Config config;
  std::string entry;
  std::unique_ptr<core::TraceWriter> writer;
  core::BufferPool pool;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> kinds;
  v1::Header header;

  // Queue from CUPTI's buffer callback to the writer thread.
  std::mutex queue_mu;
  std::condition_variable queue_cv;
  std::deque<CompletedBuffer> queue;
  bool writer_exit = false;
  std::vector<PendingWindow> windows;  // guarded by queue_mu
  std::vector<ProfiledLaunch> profiled;  // guarded by queue_mu

  // Kernel metrics (Range Profiler), when asked for.
  std::unique_ptr<KernelMetricsCollector> metrics;
  // GPU counters over time (config.gpu_metrics): the control thread runs a sampler while a timeline
  // window is open and a CUDA context exists (PM sampling needs an initialized driver, which
  // InitializeInjection runs inside of); the top-down stops it for good when its window closes, so
  // the Range Profiler finds the counters free.
  std::atomic<bool> context_seen{false};
  // Starting and stopping: the control thread, the exit handler, StopCollector.
  std::mutex sampling_mu;
  // The running sampler; the writer reads its counts under samplers_mu, the rest is sampling_mu's.
  std::mutex samplers_mu;
  std::unique_ptr<GpuCounterSampler> sampling;
  uint64_t samples_done = 0, overflows_done = 0;  // of the samplers stopped; samplers_mu
  std::atomic<bool> sampling_running{false};
  // Set up ahead of the first window, so sampling begins when it opens rather than ~0.4 s later.
  std::unique_ptr<GpuCounterSampler> sampling_prepared;  // guarded by sampling_mu
  std::atomic<bool> sampling_ready{false};
  std::atomic<bool> sampling_started_once{false};  // later windows prepare when they open
  // The samplers' warnings, each said once however many windows there are.
  std::mutex warned_mu;
  std::set<std::string> warned;
  // Not again: a start failed (not retried), or the program is exiting.
  std::atomic<bool> sampling_off{false};
  std::vector<CounterBatch> counter_batches;  // guarded by queue_mu

  // One-run top-down: when its timeline window closed (CUPTI time; 0 = not yet), and whether the
  // control thread has queued the choice. A window closes once: reopening it later records more
  // timeline but chooses nothing new.
  std::atomic<uint64_t> top_down_closed_at{0};
  bool top_down_queued = false;  // control thread only

  std::thread writer_thread;
  std::thread control_thread;
  std::mutex control_mu;
  std::condition_variable control_cv;
  bool control_exit = false;

  std::atomic<bool> collecting{false};
  std::atomic<bool> inert{false};
  std::atomic<bool> write_failed{false};
  std::atomic<uint64_t> buffers_requested{0};
  std::atomic<uint64_t> buffers_completed{0};
  std::atomic<uint64_t> dropped_by_cupti{0};
  std::atomic<uint64_t> callback_ns{0};

  // Writer thread only.
  core::ChunkBuilder builder{ApiName};
  std::vector<ProfiledLaunch> profiled_pending;  // taken from `profiled`, not yet in a chunk
  ReplayedLaunches replayed;                     // every profiled launch of the session
  bool header_written = false;
  uint64_t records_written = 0;
  uint64_t kernels_written = 0;
  uint64_t writer_ns = 0;
  uint64_t chunks_written = 0;
  uint64_t write_errors = 0;
  v1::Chunk chunk;  // reused: its buffers keep their capacity from chunk to chunk

  State(const core::Config& c, std::string e)
      : config(c), entry(std::move(e)), pool(c.buffer_bytes, c.buffer_pool_cap_bytes) {}
};

std::mutex g_lifecycle_mu;          // Start/Stop; never taken on a CUPTI callback path
std::atomic<State*> g_state{nullptr};  // the active session, or nullptr
bool g_callbacks_registered = false;

void Warn(const State& s, const std::string& msg) {
  if (!s.config.quiet) std::fprintf(stderr, "cuscope: %s\n", msg.c_str());
}

// ---- CUPTI callbacks: short, lock only the queue, never call back into CUDA ----------------

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const auto t0 = SteadyClock::now();
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  State* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr || s->inert.load(std::memory_order_relaxed)) return;
  s->buffers_requested.fetch_add(1, std::memory_order_relaxed);
  if (uint8_t* b = s->pool.Acquire(); b != nullptr) {
    *buffer = b;
    *size = s->pool.buffer_bytes();
  }
  s->callback_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count(),
                           std::memory_order_relaxed);
}

void CUPTIAPI OnBufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid) {
  const auto t0 = SteadyClock::now();
  State* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr || s->inert.load(std::memory_order_relaxed)) return;
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    s->dropped_by_cupti.fetch_add(dropped, std::memory_order_relaxed);
  }
  if (buffer != nullptr) {
    s->buffers_completed.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(s->queue_mu);
      s->queue.push_back({buffer, valid});
    }
    s->queue_cv.notify_one();
  }
  s->callback_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count(),
                           std::memory_order_relaxed);
}

// ---- Collection on and off ------------------------------------------------------------------

absl::Status EnableKinds(State& s) {
  for (size_t i = 0; i < s.kinds.size(); ++i) {
    if (auto st = CuptiStatus(cuptiActivityEnable(s.kinds[i]), "cuptiActivityEnable"); !st.ok()) {
      for (size_t j = 0; j < i; ++j) cuptiActivityDisable(s.kinds[j]);
      return st;
    }
  }
  s.collecting.store(true);
  return absl::OkStatus();
}

void DisableKinds(State& s) {
  if (!s.collecting.exchange(false)) return;
  for (CUpti_ActivityKind k : s.kinds) cuptiActivityDisable(k);
}

void QueueWindow(State& s, bool open, const std::string& reason, v1::WindowKind kind = v1::WINDOW_KIND_TIMELINE,
                 uint64_t time = 0) {
  if (time == 0) time = CuptiNow();
  std::lock_guard<std::mutex> lock(s.queue_mu);
  s.windows.push_back({open, time, reason, kind});
}

void WakeControl(State& s) {
  std::lock_guard<std::mutex> lock(s.control_mu);
  s.control_cv.notify_all();
}

void OpenWindow(State& s, const std::string& reason) {
  if (s.collecting.load()) return;
  if (auto st = EnableKinds(s); !st.ok()) {
    Warn(s, absl::StrCat("cannot start collection: ", st.message(), "; profiling is off"));
    return;
  }
  QueueWindow(s, true, reason);
  if (s.config.gpu_metrics) WakeControl(s);  // to start the GPU counters
}

void CloseWindow(State& s, const std::string& reason) {
  if (!s.collecting.load()) return;
  DisableKinds(s);
  QueueWindow(s, false, reason);
  if (reason == "end") return;
  uint64_t expected = 0;
  if (s.config.top_down_kernels > 0 && s.top_down_closed_at.compare_exchange_strong(expected, CuptiNow())) {
    WakeControl(s);
  } else if (s.config.gpu_metrics) {
    WakeControl(s);  // to stop the GPU counters
  }
}

// cudaProfilerStart/Stop (and the driver's cuProfilerStart/Stop) as capture gates; kernel
// launches and context teardown for kernel metrics.
void CUPTIAPI OnApiCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  State* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr || s->inert.load()) return;
  const bool profiler_api = (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                             (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ||
                              cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)) ||
                            (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
                             (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart || cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    if (!s->context_seen.exchange(true) && s->config.gpu_metrics) WakeControl(*s);
    return;
  }
  if (!profiler_api) {
    if (s->metrics != nullptr) s->metrics->OnCallback(domain, cbid, data, s->collecting.load(std::memory_order_relaxed));
    return;
  }
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  const bool start = (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
                     (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
  const bool stop = (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
                    (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  if (start && info->callbackSite == CUPTI_API_EXIT) OpenWindow(*s, "cudaProfilerStart");
  if (stop && info->callbackSite == CUPTI_API_ENTER) CloseWindow(*s, "cudaProfilerStop");
}

// ---- Writer thread --------------------------------------------------------------------------

// Moves the launches profiled since the last call to the writer's side, so the kernel records of
// those launches are known as replayed before they are translated.
void TakeProfiled(State& s) {
  std::vector<ProfiledLaunch> profiled;
  {
    std::lock_guard<std::mutex> lock(s.queue_mu);
    profiled.swap(s.profiled);
  }
  for (auto& p : profiled) {
    s.replayed[p.correlation_id] = p.start_ns;
    s.profiled_pending.push_back(std::move(p));
  }
}

void WriteChunk(State& s, bool final_chunk) {
  if (s.write_failed.load()) {
    // Nothing more is written: counter samples still arriving are dropped here, or the writer
    // would wake for them again and again.
    std::lock_guard<std::mutex> lock(s.queue_mu);
    s.counter_batches.clear();
    return;
  }
  if (!s.header_written) {
    auto sys = QuerySystem();
    if (sys.ok()) {
      for (const auto& d : sys->devices) *s.header.add_devices() = d;
      s.header.mutable_session()->set_driver_version(sys->driver_version);
      s.header.mutable_session()->set_runtime_version(sys->runtime_version);
      if (s.config.gpu_metrics && s.config.gpu_metrics_devices.empty()) {
        for (const auto& d : sys->devices) s.header.mutable_config()->add_sampled_devices(d.id());
      }
    }
    if (auto st = s.writer->WriteHeader(s.header); !st.ok()) {
      s.write_failed.store(true);
      WakeControl(s);  // the GPU counters stop too
      ++s.write_errors;
      Warn(s, absl::StrCat(st.message(), "; profiling stopped"));
      DisableKinds(s);
      return;
    }
    s.header_written = true;
  }
  std::vector<PendingWindow> windows;
  {
    std::lock_guard<std::mutex> lock(s.queue_mu);
    windows.swap(s.windows);
  }
  for (const auto& w : windows) {
    s.builder.AddWindow(w.kind, w.open ? w.time : 0, w.open ? 0 : w.time, w.reason);
  }
  std::vector<CounterBatch> batches;
  {
    std::lock_guard<std::mutex> lock(s.queue_mu);
    batches.swap(s.counter_batches);
  }
  for (const auto& b : batches) s.builder.AddCounterSeries(b.device, b.source, b.name, b.points);
  TakeProfiled(s);
  std::vector<ProfiledLaunch> profiled;
  profiled.swap(s.profiled_pending);
  for (const auto& p : profiled) {
    s.builder.AddKernelMetrics(p.correlation_id, p.device, p.kernel_name, p.passes, v1::REPLAY_MODE_KERNEL, p.values,
                               &p.shape);
    // The replay serialized the context for this span: not the program's own timeline.
    s.builder.AddWindow(v1::WINDOW_KIND_METRICS, p.start_ns, p.end_ns, "kernel replay");
  }
  if (s.builder.pending_records() == 0 && windows.empty() && !final_chunk) return;
  v1::Chunk& chunk = s.chunk;
  s.records_written += s.builder.pending_records();
  s.builder.TakeChunk(&chunk);
  s.kernels_written += chunk.kernels().duration_size();
  v1::CaptureStats* st = chunk.mutable_stats();
  st->set_buffers_requested(s.buffers_requested.load());
  st->set_buffers_completed(s.buffers_completed.load());
  st->set_buffers_refused_at_cap(s.pool.refused());
  st->set_records_dropped_by_cupti(s.dropped_by_cupti.load());
  st->set_records_written(s.records_written);
  st->set_records_untranslated(s.builder.untranslated_records());
  st->set_records_incomplete(s.builder.incomplete_records());
  st->set_peak_pool_bytes(s.pool.peak_bytes());
  st->set_callback_time_ns(s.callback_ns.load());
  st->set_writer_time_ns(s.writer_ns);
  st->set_cupti_overhead_ns(s.builder.overhead_ns());
  st->set_chunks_written(s.chunks_written + 1);
  st->set_write_errors(s.write_errors);
  {
    std::lock_guard<std::mutex> lock(s.samplers_mu);
    st->set_counter_samples(s.samples_done + (s.sampling ? s.sampling->samples() : 0));
    st->set_counter_sample_overflows(s.overflows_done + (s.sampling ? s.sampling->overflows() : 0));
  }
  // bytes_written counts what was on disk before this chunk.
  st->set_bytes_written(s.writer->bytes_written());
  if (auto ws = s.writer->WriteChunk(chunk); !ws.ok()) {
    s.write_failed.store(true);
    WakeControl(s);  // the GPU counters stop too
    ++s.write_errors;
    Warn(s, absl::StrCat(ws.message(), "; profiling stopped, the trace keeps what was written before"));
    DisableKinds(s);
    return;
  }
  ++s.chunks_written;
}

void ProcessBuffer(State& s, const CompletedBuffer& b) {
  const auto t0 = SteadyClock::now();
  if (!s.write_failed.load()) {
    TakeProfiled(s);
    const ReplayedLaunches* replayed = s.replayed.empty() ? nullptr : &s.replayed;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(b.buffer, b.valid, &record) == CUPTI_SUCCESS) {
      TranslateActivity(*record, s.builder, replayed);
      if (record->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) {
        // CUPTI hands ownership of the overhead details to the client.
        std::free(reinterpret_cast<CUpti_ActivityOverhead3*>(record)->overheadData);
      }
    }
  }
  s.pool.Release(b.buffer);
  s.writer_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count();
  WriteChunk(s, false);
}

// The top-down's choice, made once every buffer of its timeline window has been translated: the
// window's hottest kernels, handed to the metrics collector as its only targets.
void ChooseHotKernels(State& s) {
  auto chosen = core::SelectHotKernels(s.builder.KernelTotals(), s.config.top_down_kernels);
  s.builder.AddTopDownSelection(CuptiNow(), s.builder.total_kernel_ns(), chosen);
  if (chosen.empty()) {
    Warn(s, "top-down: no kernel ran in the timeline window; no kernel metrics to collect");
  } else {
    std::string names;
    for (const auto& k : chosen) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", core::FunctionBaseName(core::DemangleName(k.name)), " (",
                      k.shape.grid[0], "x", k.shape.grid[1], "x", k.shape.grid[2], " / ", k.shape.block[0], "x",
                      k.shape.block[1], "x", k.shape.block[2], ")");
    }
    Warn(s, absl::StrCat("top-down: collecting ", s.config.metrics_request, " on the next ", s.config.top_down_launches,
                         " launches of ", names));
  }
  if (s.metrics != nullptr) s.metrics->SetTargets(std::move(chosen), s.config.top_down_launches);
  WriteChunk(s, false);
}

void WriterLoop(State* s) {
  while (true) {
    CompletedBuffer b{};
    {
      std::unique_lock<std::mutex> lock(s->queue_mu);
      s->queue_cv.wait(lock, [s] { return !s->queue.empty() || s->writer_exit || !s->counter_batches.empty(); });
      if (s->queue.empty()) {
        if (s->writer_exit) break;  // exit requested and every buffer written; the last chunk takes the rest
        lock.unlock();
        WriteChunk(*s, false);  // GPU counter samples alone, so they reach the file while the program is quiet
        continue;
      }
      b = s->queue.front();
      s->queue.pop_front();
    }
    if (b.choose_hot_kernels) {
      ChooseHotKernels(*s);
      continue;
    }
    ProcessBuffer(*s, b);
  }
  WriteChunk(*s, true);
}

// ---- GPU counters over time ------------------------------------------------------------------

// Sampling may be wanted now or when a window opens later.
bool SamplingPossible(const State& s) {
  return s.config.gpu_metrics && !s.sampling_off.load() && s.context_seen.load() && s.top_down_closed_at.load() == 0 &&
         !s.write_failed.load();
}

bool SamplingWanted(const State& s) { return SamplingPossible(s) && s.collecting.load(); }

// The first window's sampler is prepared before the window opens (ReconcileSampling says why).
bool PrepareAheadDue(const State& s, bool prepare_ahead) {
  return prepare_ahead && !s.sampling_started_once.load() && SamplingPossible(s) && !s.sampling_running.load() &&
         !s.sampling_ready.load();
}

// Whether the control thread has sampling work to do: start, stop, prepare ahead, or release.
bool SamplingDue(const State& s, bool prepare_ahead) {
  if (!s.config.gpu_metrics) return false;
  return SamplingWanted(s) != s.sampling_running.load() || PrepareAheadDue(s, prepare_ahead) ||
         (!SamplingPossible(s) && s.sampling_ready.load());
}

void ShutDownSampling(State& s);

// Stops the counters at exit before anything they use is torn down. The sampler thread decodes
// with objects of the profiler host library, which CUPTI loads when sampling is prepared; their
// static destructors run at exit in reverse order of registration, so a handler registered after
// that load runs before them (the collector's own exit handler, registered at start, would run after
// and find them freed: "double free or corruption").
void StopSamplingAtExit() {
  State* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr || s->inert.load()) return;
  ShutDownSampling(*s);
}

// One line, and no GPU counters for the rest of the session; the timeline goes on.
void TurnSamplingOff(State& s, const absl::Status& why) {
  s.sampling_off.store(true);
  Warn(s, absl::StrCat("GPU counters over time are off: ", why.message(), "; the timeline goes on"));
}

std::unique_ptr<GpuCounterSampler> NewSampler(State& s) {
  GpuCounterSamplerOptions options;
  options.devices = s.config.gpu_metrics_devices;
  options.interval_ns = 1'000'000'000ull / s.config.gpu_metrics_frequency_hz;
  return std::make_unique<GpuCounterSampler>(
      std::move(options),
      [&s](std::vector<CounterBatch> batches) {
        {
          std::lock_guard<std::mutex> lock(s.queue_mu);
          for (auto& b : batches) s.counter_batches.push_back(std::move(b));
        }
        s.queue_cv.notify_one();
      },
      [&s](const std::string& msg) {
        // A sampler per window: what one says, the next would repeat.
        {
          std::lock_guard<std::mutex> lock(s.warned_mu);
          if (!s.warned.insert(msg).second) return;
        }
        Warn(s, msg);
      });
}

// Under sampling_mu. A sampler that cannot be set up (no permission for the counters, no NVML, a
// device without PM sampling) is named in one line and not retried; the timeline goes on.
void PrepareSampling(State& s) {
  auto sampler = NewSampler(s);
  if (auto st = sampler->Prepare(); !st.ok()) {
    TurnSamplingOff(s, st);
    return;
  }
  static std::once_flag exit_handler_once;
  std::call_once(exit_handler_once, [] { std::atexit(StopSamplingAtExit); });
  s.sampling_prepared = std::move(sampler);
  s.sampling_ready.store(true);
}

// Under sampling_mu: a prepared sampler that will not be started gives the counters back.
void ReleasePrepared(State& s) {
  if (s.sampling_prepared == nullptr) return;
  s.sampling_prepared->Stop();
  s.sampling_prepared.reset();
  s.sampling_ready.store(false);
}

// Under sampling_mu.
void StartSampling(State& s) {
  if (s.sampling_prepared == nullptr) PrepareSampling(s);
  if (s.sampling_prepared == nullptr) return;
  std::unique_ptr<GpuCounterSampler> sampler = std::move(s.sampling_prepared);
  s.sampling_ready.store(false);
  const uint64_t started = CuptiNow();
  if (auto st = sampler->Start(); !st.ok()) {
    TurnSamplingOff(s, st);
    sampler->Stop();
    return;
  }
  QueueWindow(s, true, "gpu metrics", v1::WINDOW_KIND_COUNTER_SAMPLING, started);
  {
    std::lock_guard<std::mutex> lock(s.samplers_mu);
    s.sampling = std::move(sampler);
  }
  s.sampling_running.store(true);
  s.sampling_started_once.store(true);
}

// Under sampling_mu. Returns when the counters are free and the last samples are queued for the
// writer.
void StopSampling(State& s) {
  if (s.sampling == nullptr) return;
  s.sampling->Stop();
  {
    std::lock_guard<std::mutex> lock(s.samplers_mu);
    s.samples_done += s.sampling->samples();
    s.overflows_done += s.sampling->overflows();
    s.sampling.reset();
  }
  s.sampling_running.store(false);
  QueueWindow(s, false, "gpu metrics", v1::WINDOW_KIND_COUNTER_SAMPLING);
  s.queue_cv.notify_one();
}

// No more sampling in this session: the running sampler stops, a prepared one gives the counters
// back. At exit and when the collector stops.
void ShutDownSampling(State& s) {
  std::lock_guard<std::mutex> lock(s.sampling_mu);
  s.sampling_off.store(true);
  StopSampling(s);
  ReleasePrepared(s);
}

// Control thread. Prepares a sampler as soon as sampling is possible, so the first window, even if
// it opens later, is sampled from its start; releases it when sampling cannot come any more (the
// top-down's window closed: the Range Profiler needs the counters). Preparing holds the control
// thread for the set-up (~0.4 s), so it is left to the window's opening when that is due sooner
// (`prepare_ahead` false): the window then opens on time and its samples begin after the set-up.
// Later windows (cudaProfilerStart/Stop ranges) prepare when they open: preparing after each one
// closed would hold the counters between windows and the control thread after each.
void ReconcileSampling(State& s, bool prepare_ahead) {
  if (!s.config.gpu_metrics) return;
  std::lock_guard<std::mutex> lock(s.sampling_mu);
  const bool wanted = SamplingWanted(s);
  if (wanted && s.sampling == nullptr) StartSampling(s);
  if (!wanted && s.sampling != nullptr) StopSampling(s);
  if (!SamplingPossible(s)) {
    ReleasePrepared(s);
  } else if (PrepareAheadDue(s, prepare_ahead)) {
    PrepareSampling(s);
  }
}

// Queues the top-down's choice behind the window's records. A default flush hands over the buffers
// whose records are all complete; kernels still running when it is called are not counted (a
// forced flush would hand them over without timestamps). The caller waits a moment after the
// window closed first, so only a kernel longer than that is missed.
void QueueHotKernelChoice(State& s) {
  cuptiActivityFlushAll(0);
  {
    std::lock_guard<std::mutex> lock(s.queue_mu);
    s.queue.push_back({nullptr, 0, true});
  }
  s.queue_cv.notify_one();
}

// The control thread: opens and closes the delay/duration windows, starts and stops the GPU
// counters with the window, hands partly filled buffers to the writer every flush period, and
// queues the top-down's choice after its window closed (the counters stopped first). CUPTI's
// own periodic flush delivers only full buffers, so without this a quiet program's records would
// reach the file only at exit, and a crash would lose them.
void ControlLoop(State* s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto seconds = [](double v) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(v)); };
  const bool gated = s->config.capture_range == "cudaProfilerApi";
  bool open_pending = !gated && s->config.delay_seconds > 0;
  bool close_pending = !gated && s->config.duration_seconds > 0;
  const auto open_at = start + seconds(s->config.delay_seconds);
  const auto close_at = open_at + seconds(s->config.duration_seconds);
  const auto period = std::chrono::milliseconds(s->config.flush_period_ms);
  // How long the top-down lets the window's last kernels finish before choosing.
  constexpr auto kSettle = std::chrono::milliseconds(100);
  std::optional<Clock::time_point> choose_at;
  auto next_flush = start + period;
  const auto top_down_due = [s, &choose_at] {
    return !choose_at && !s->top_down_queued && s->top_down_closed_at.load() != 0;
  };
  // Preparing the GPU counters ahead holds this thread (~0.4 s): not when the window opens sooner.
  static constexpr auto kPrepareLead = std::chrono::milliseconds(600);
  const auto prepare_ahead = [&open_pending, &open_at](Clock::time_point now) {
    return !(open_pending && open_at - now < kPrepareLead);
  };
  const auto woken = [s, &top_down_due, &prepare_ahead] {
    return s->control_exit || top_down_due() || SamplingDue(*s, prepare_ahead(Clock::now()));
  };
  std::unique_lock<std::mutex> lock(s->control_mu);
  while (true) {
    auto wake = next_flush;
    if (open_pending) wake = std::min(wake, open_at);
    if (close_pending) wake = std::min(wake, close_at);
    if (choose_at) wake = std::min(wake, *choose_at);
    s->control_cv.wait_until(lock, wake, woken);
    if (s->control_exit) return;
    const auto now = Clock::now();
    lock.unlock();  // never hold a lock of ours while calling into CUPTI
    if (open_pending && now >= open_at) {
      open_pending = false;
      OpenWindow(*s, "delay");
    }
    if (close_pending && now >= close_at) {
      close_pending = false;
      CloseWindow(*s, "duration");
    }
    // However the window closed (duration, cudaProfilerStop), the choice waits kSettle.
    if (top_down_due()) choose_at = now + kSettle;
    ReconcileSampling(*s, prepare_ahead(now));
    if (choose_at && now >= *choose_at) {
      choose_at.reset();
      s->top_down_queued = true;
      QueueHotKernelChoice(*s);
    }
    if (now >= next_flush) {
      // Default flush: every buffer whose records are all complete, full or not. A forced flush
      // here would hand over kernels still running, with their timestamps unset.
      cuptiActivityFlushAll(0);
      next_flush = now + period;
    }
    lock.lock();
  }
}

v1::Header BuildHeader(const State& s, uint64_t start) {
  v1::Header h;
  auto* session = h.mutable_session();
  session->set_pid(static_cast<uint32_t>(::getpid()));
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) == 0) session->set_host(host);
  for (auto& a : CommandLine()) session->add_command_line(a);
  session->set_start_time_ns(start);
  uint32_t cupti_version = 0;
  cuptiGetVersion(&cupti_version);
  session->set_cupti_version(cupti_version);
  session->set_entry(s.entry);
  session->set_rank(EnvInt({"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}));
  session->set_local_rank(EnvInt({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}));
  session->set_world_size(EnvInt({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}));
  session->set_clock_ref_cupti_ns(CuptiNow());
  session->set_clock_ref_monotonic_ns(MonotonicNow());
  session->set_library_version(kLibraryVersion);
  auto* cfg = h.mutable_config();
  for (const auto& k : s.config.activity_kinds) cfg->add_activity_kinds(k);
  cfg->set_buffer_bytes(s.config.buffer_bytes);
  cfg->set_buffer_pool_cap_bytes(s.config.buffer_pool_cap_bytes);
  cfg->set_flush_period_ms(s.config.flush_period_ms);
  cfg->set_delay_seconds(s.config.delay_seconds);
  cfg->set_duration_seconds(s.config.duration_seconds);
  cfg->set_profiler_api_gated(s.config.capture_range == "cudaProfilerApi");
  for (const auto& [k, v] : s.config.settings) (*cfg->mutable_settings())[k] = v;
  for (const auto& m : s.config.metrics) cfg->add_metrics(m);
  cfg->set_top_down_kernels(s.config.top_down_kernels);
  if (s.config.top_down_kernels > 0) cfg->set_top_down_launches(static_cast<uint32_t>(s.config.top_down_launches));
  if (!s.config.metrics.empty()) cfg->set_replay_mode(v1::REPLAY_MODE_KERNEL);
  if (s.config.gpu_metrics) {
    // Every device is filled in with the header's device list (WriteChunk).
    for (uint32_t d : s.config.gpu_metrics_devices) cfg->add_sampled_devices(d);
    cfg->set_sampling_interval_ns(1'000'000'000ull / s.config.gpu_metrics_frequency_hz);
    for (const auto& m : DefaultPmSamplingMetrics()) cfg->add_sampled_counters(m);
    for (const char* n : core::counter::kNvmlCounters) cfg->add_sampled_counters(n);
  }
  return h;
}

absl::Status EnableProfilerApiCallbacks(State& s) {
  struct Cb {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
  };
  constexpr Cb cbs[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000},
                        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000},
                        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart},
                        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop}};
  for (const Cb& cb : cbs) {
    if (auto st = CuptiStatus(cuptiEnableCallback(1, s.subscriber, cb.domain, cb.cbid), "cuptiEnableCallback");
        !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

// Kernel metrics: the launch callbacks on the session's subscriber. A failure turns the metrics
// off with one line; the timeline does not depend on them.
void StartKernelMetrics(State& s) {
  s.metrics = std::make_unique<KernelMetricsCollector>(
      s.config,
      [&s](ProfiledLaunch p) {
        {
          std::lock_guard<std::mutex> lock(s.queue_mu);
          s.profiled.push_back(std::move(p));
        }
        s.queue_cv.notify_one();
      },
      [&s](const std::string& msg) { Warn(s, msg); });
  for (const auto& [domain, cbid] : KernelMetricsCollector::Callbacks()) {
    if (auto st = CuptiStatus(cuptiEnableCallback(1, s.subscriber, domain, cbid), "cuptiEnableCallback"); !st.ok()) {
      Warn(s, absl::StrCat("kernel metrics are off: ", st.message(), "; the timeline goes on"));
      s.metrics->Shutdown();
      return;
    }
  }
}

// Undoes a partial start.
void Teardown(State& s) {
  DisableKinds(s);
  if (s.subscriber != nullptr) {
    cuptiUnsubscribe(s.subscriber);
    s.subscriber = nullptr;
  }
}

}  // namespace

absl::Status StartCollector(const core::Config& config, const std::string& entry) {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  if (g_state.load() != nullptr) return absl::FailedPreconditionError("a cuscope session is already active");

  if (!DriverLoadable()) {
    return absl::UnavailableError("no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded)");
  }
  auto path = core::ExpandOutputName(config.output, core::CurrentProcessOutputContext());
  if (!path.ok()) return path.status();
  auto* s = new State(config, entry);
  for (const auto& k : kKinds) {
    if (config.kind_enabled(k.name)) s->kinds.push_back(k.kind);
  }

  // Subscribing first tells us whether another CUPTI tool owns this process.
  if (auto st = CuptiStatus(cuptiSubscribe(&s->subscriber, OnApiCallback, s), "cuptiSubscribe"); !st.ok()) {
    s->subscriber = nullptr;
    return st;
  }
  auto writer = core::TraceWriter::Create(*path, config.force_overwrite);
  if (!writer.ok()) {
    Teardown(*s);
    return writer.status();
  }
  s->writer = std::move(*writer);
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (!g_callbacks_registered) {
    if (auto st = CuptiStatus(cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted),
                              "cuptiActivityRegisterCallbacks");
        !st.ok()) {
      Teardown(*s);
      ::unlink(path->c_str());
      return st;
    }
    g_callbacks_registered = true;
  }
  cuptiActivityFlushPeriod(config.flush_period_ms);
  const uint64_t start = CuptiNow();
  s->header = BuildHeader(*s, start);
  g_state.store(s, std::memory_order_release);

  const bool gated = config.capture_range == "cudaProfilerApi";
  if (gated) {
    if (auto st = EnableProfilerApiCallbacks(*s); !st.ok()) {
      g_state.store(nullptr);
      Teardown(*s);
      ::unlink(path->c_str());
      return st;
    }
  } else if (config.delay_seconds == 0) {
    if (auto st = EnableKinds(*s); !st.ok()) {
      g_state.store(nullptr);
      Teardown(*s);
      ::unlink(path->c_str());
      return st;
    }
    QueueWindow(*s, true, "session");
  }
  if (!config.metrics.empty()) StartKernelMetrics(*s);
  if (config.top_down_kernels > 0) s->builder.EnableKernelTotals();
  if (config.gpu_metrics) {
    // Counters are sampled once the program has a context: at its first context creation, or
    // already, when linked in late. The callback goes on first, so a context made meanwhile is
    // seen one way or the other.
    if (auto st = CuptiStatus(
            cuptiEnableCallback(1, s->subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
            "cuptiEnableCallback");
        !st.ok()) {
      TurnSamplingOff(*s, st);
    }
    if (DriverHasContext()) s->context_seen.store(true);
  }
  s->writer_thread = std::thread(WriterLoop, s);
  s->control_thread = std::thread(ControlLoop, s);
  return absl::OkStatus();
}

absl::Status StopCollector(CollectorSummary* summary) {
  // A forked child must not touch the parent's session, nor a lock the parent may have held.
  if (State* early = g_state.load(); early != nullptr && early->inert.load()) return absl::OkStatus();
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  State* s = g_state.load();
  if (s == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  if (s->control_thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(s->control_mu);
      s->control_exit = true;
    }
    s->control_cv.notify_all();
    s->control_thread.join();
  }
  ShutDownSampling(*s);
  CloseWindow(*s, "end");
  if (s->metrics != nullptr) s->metrics->Shutdown();
  // Hands every buffer, partly filled ones too, to OnBufferCompleted.
  const absl::Status flushed =
      CuptiStatus(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  {
    std::lock_guard<std::mutex> lock(s->queue_mu);
    s->writer_exit = true;
  }
  s->queue_cv.notify_all();
  if (s->writer_thread.joinable()) s->writer_thread.join();
  g_state.store(nullptr, std::memory_order_release);
  if (s->subscriber != nullptr) {
    cuptiUnsubscribe(s->subscriber);
    s->subscriber = nullptr;
  }
  absl::Status closed = s->writer->Close();
  if (summary != nullptr) {
    summary->path = s->writer->path();
    summary->records = s->records_written;
    summary->kernels = s->kernels_written;
    summary->bytes = s->writer->bytes_written();
    summary->dropped = s->dropped_by_cupti.load();
    summary->buffers_refused = s->pool.refused();
    summary->launches_profiled = s->metrics != nullptr ? s->metrics->profiled() : 0;
  }
  if (!flushed.ok()) return flushed;
  if (s->write_failed.load()) return absl::DataLossError("the trace could not be written completely");
  return closed;
}

absl::Status FlushCollector() {
  if (g_state.load() == nullptr) return absl::FailedPreconditionError("no cuscope session is active");
  return CuptiStatus(cuptiActivityFlushAll(0), "cuptiActivityFlushAll");
}

bool CollectorActive() {
  State* s = g_state.load();
  return s != nullptr && !s->inert.load();
}

std::string CollectorOutputPath() {
  std::lock_guard<std::mutex> lifecycle(g_lifecycle_mu);
  State* s = g_state.load();
  return s != nullptr && s->writer ? s->writer->path() : std::string();
}

void MarkCollectorForkedChild() {
  if (State* s = g_state.load(); s != nullptr) s->inert.store(true);
}

}  // namespace cuscope::cupti
