#include "lib/cupti/sampling_controller.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/cupti/cupti_location.h"

namespace cuscope::cupti {

namespace {

// Loads the profiler host libraries CUPTI would load at the first sampler's set-up, from beside the
// libcupti in use (where CUPTI looks for them), and keeps them loaded. A library that is not there
// is left to CUPTI, which then names what is missing when sampling is set up.
void LoadProfilerHostLibraries() {
  const std::string cupti = LoadedCuptiLibraryPath();
  const size_t slash = cupti.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : cupti.substr(0, slash + 1);
  for (const char* name : {"libnvperf_host.so", "libnvperf_target.so"}) {
    if (dlopen((dir + name).c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) (void)dlopen(name, RTLD_NOW | RTLD_LOCAL);
  }
}

}  // namespace

SamplingController::SamplingController(const settings::Config& config, CuptiApi& cupti, TracePipeline& pipeline,
                                       std::function<void(const std::string&)> warn, void (*at_exit)())
    : config_(config), cupti_(cupti), pipeline_(pipeline), warn_(std::move(warn)), at_exit_(at_exit) {
  if (!config_.gpu_metrics) return;
  static std::once_flag libraries_once;
  std::call_once(libraries_once, LoadProfilerHostLibraries);
}

void SamplingController::RegisterExitHandlerOnce() {
  if (at_exit_ == nullptr) return;
  static std::once_flag exit_handler_once;
  std::call_once(exit_handler_once, [this] { std::atexit(at_exit_); });
}

bool SamplingController::Possible(Conditions c) const {
  return config_.gpu_metrics && state_.load() != State::kOff && c.possible;
}

bool SamplingController::PrepareAheadDue(Conditions c, bool prepare_ahead) const {
  return prepare_ahead && !started_once_.load() && Possible(c) && state_.load() == State::kIdle;
}

bool SamplingController::Due(Conditions c, bool prepare_ahead) const {
  if (!config_.gpu_metrics || !ControlThreadMayPrepare()) return false;
  const bool wanted = Possible(c) && c.window_open;
  return wanted != (state_.load() == State::kRunning) || PrepareAheadDue(c, prepare_ahead) ||
         (!Possible(c) && state_.load() == State::kPrepared);
}

void SamplingController::Reconcile(Conditions c, bool prepare_ahead) {
  if (!config_.gpu_metrics || !ControlThreadMayPrepare()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ReconcileLocked(c, prepare_ahead);
}

void SamplingController::ReconcileLocked(Conditions c, bool prepare_ahead) {
  const bool wanted = Possible(c) && c.window_open;
  if (wanted && running_ == nullptr) Start();
  if (!wanted && running_ != nullptr) Stop();
  if (!Possible(c)) {
    ReleasePrepared();
  } else if (PrepareAheadDue(c, prepare_ahead)) {
    Prepare();
  }
}

bool SamplingController::OnProgramCall(Conditions c) {
  if (!AwaitingProgramCall()) return false;
  // Before the program has a context (a module load at start-up) there is nothing to set up yet:
  // a later call.
  if (!Possible(c) && state_.load() != State::kOff) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (first_prepared_.load()) return false;
  ReconcileLocked(c, /*prepare_ahead=*/true);  // the start when the window is open, else the set-up
  first_prepared_.store(true, std::memory_order_release);
  return true;
}

void SamplingController::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  state_.store(State::kOff);
  Stop();
  ReleasePrepared();
}

void SamplingController::TurnOff(const absl::Status& why) {
  state_.store(State::kOff);
  warn_(absl::StrCat("GPU counters over time are off: ", why.message(), "; the timeline goes on"));
}

CounterTotals SamplingController::totals() {
  std::lock_guard<std::mutex> lock(samplers_mu_);
  CounterTotals t = done_;
  if (running_ != nullptr) {
    t.samples += running_->samples();
    t.overflows += running_->overflows();
  }
  return t;
}

std::unique_ptr<GpuCounterSampler> SamplingController::NewSampler() {
  GpuCounterSamplerOptions options;
  options.devices = config_.gpu_metrics_devices;
  options.interval_ns = 1'000'000'000ull / config_.gpu_metrics_frequency_hz;
  return std::make_unique<GpuCounterSampler>(
      cupti_, std::move(options), [this](std::vector<CounterBatch> batches) { pipeline_.QueueCounterBatches(std::move(batches)); },
      [this](const std::string& msg) {
        // A sampler per window: what one says, the next would repeat.
        {
          std::lock_guard<std::mutex> lock(warned_mu_);
          if (!warned_.insert(msg).second) return;
        }
        warn_(msg);
      });
}

// A sampler that cannot be set up (no permission for the counters, no NVML, a device without PM
// sampling) is named in one line and not retried.
void SamplingController::Prepare() {
  auto sampler = NewSampler();
  if (auto st = sampler->Prepare(); !st.ok()) {
    TurnOff(st);
    return;
  }
  prepared_ = std::move(sampler);
  state_.store(State::kPrepared);
  RegisterExitHandlerOnce();
}

// A prepared sampler that will not be started gives the counters back.
void SamplingController::ReleasePrepared() {
  if (prepared_ == nullptr) return;
  prepared_->Stop();
  prepared_.reset();
  if (state_.load() == State::kPrepared) state_.store(State::kIdle);
}

void SamplingController::Start() {
  if (prepared_ == nullptr) Prepare();
  if (prepared_ == nullptr) return;
  std::unique_ptr<GpuCounterSampler> sampler = std::move(prepared_);
  state_.store(State::kIdle);
  const uint64_t started = cupti_.Timestamp();
  if (auto st = sampler->Start(); !st.ok()) {
    TurnOff(st);
    sampler->Stop();
    return;
  }
  pipeline_.QueueWindow(true, started, "gpu metrics", v1::WINDOW_KIND_COUNTER_SAMPLING);
  {
    std::lock_guard<std::mutex> lock(samplers_mu_);
    running_ = std::move(sampler);
  }
  state_.store(State::kRunning);
  started_once_.store(true);
}

// Returns when the counters are free and the last samples are queued for the writer.
void SamplingController::Stop() {
  if (running_ == nullptr) return;
  running_->Stop();
  {
    std::lock_guard<std::mutex> lock(samplers_mu_);
    done_.samples += running_->samples();
    done_.overflows += running_->overflows();
    running_.reset();
  }
  if (state_.load() == State::kRunning) state_.store(State::kIdle);
  pipeline_.QueueWindow(false, cupti_.Timestamp(), "gpu metrics", v1::WINDOW_KIND_COUNTER_SAMPLING);
  pipeline_.Wake();
}

}  // namespace cuscope::cupti
