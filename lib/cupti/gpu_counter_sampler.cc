#include "lib/cupti/gpu_counter_sampler.h"

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/pm_sampler.h"
#include "lib/nvml/nvml_sampler.h"

namespace cuscope::cupti {
namespace {

using Clock = std::chrono::steady_clock;

// PM sample stamps further than this from CUPTI's clock, either way, are on another clock:
// normal lag is at most the hardware buffer's second of backlog plus a drain period.
constexpr uint64_t kClockToleranceNs = 5'000'000'000;

// One line per distinct reason PM sampling did not start, naming its devices: eight GPUs refused
// for the same reason make one line, not eight.
std::vector<std::string> PmFailureLines(const std::vector<std::pair<uint32_t, std::string>>& failures) {
  std::vector<std::pair<std::string, std::vector<uint32_t>>> by_reason;
  for (const auto& [device, message] : failures) {
    const std::string prefix = absl::StrCat("PM sampling on device ", device, ": ");
    std::string reason = absl::StartsWith(message, prefix) ? message.substr(prefix.size()) : message;
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& r) { return r.first == reason; });
    if (it == by_reason.end()) {
      by_reason.push_back({std::move(reason), {device}});
    } else {
      it->second.push_back(device);
    }
  }
  std::vector<std::string> lines;
  for (const auto& [reason, devices] : by_reason) {
    lines.push_back(absl::StrCat("PM sampling on device", devices.size() > 1 ? "s " : " ", absl::StrJoin(devices, ", "),
                                 ": ", reason, "; GPU counters from PM sampling are off there"));
  }
  return lines;
}

}  // namespace

GpuCounterSampler::GpuCounterSampler(CuptiApi& cupti, GpuCounterSamplerOptions options, Emit emit, Warn warn)
    : cupti_(cupti), options_(std::move(options)), emit_(std::move(emit)), warn_(std::move(warn)) {
  if (options_.interval_ns == 0) options_.interval_ns = kDefaultPmIntervalNs;
  if (options_.nvml_period_ns == 0) options_.nvml_period_ns = kDefaultNvmlPeriodNs;
}

GpuCounterSampler::~GpuCounterSampler() { Stop(); }

absl::Status GpuCounterSampler::Prepare() {
  std::lock_guard<std::mutex> setup(setup_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (prepared_ || started_ || stopped_) {
      return absl::FailedPreconditionError("GPU counter sampling was already prepared");
    }
    prepared_ = true;
  }
  prepare_status_ = PrepareSources();
  return prepare_status_;
}

absl::Status GpuCounterSampler::PrepareSources() {
  std::vector<std::string> failures;  // one line per source that does not run

  // The devices: as given, or as the trace header would have them.
  std::vector<v1::Device> info = options_.device_info;
  absl::Status info_status;
  if (info.empty()) {
    auto sys = cupti_.QuerySystem();
    if (sys.ok()) {
      info = sys->devices;
    } else {
      info_status = sys.status();
    }
  }
  std::vector<uint32_t> devices = options_.devices;
  if (devices.empty()) {
    for (const auto& d : info) devices.push_back(d.id());
  }
  if (devices.empty()) {
    return absl::UnavailableError(absl::StrCat(
        "no GPU counters to sample: ", info_status.ok() ? "no CUDA device" : std::string(info_status.message())));
  }

  if (options_.pm_sampling) {
    std::vector<std::pair<uint32_t, std::string>> pm_failures;
    bool rejected_reported = false;
    PmSamplerOptions pm_options;
    pm_options.interval_ns = options_.interval_ns;
    pm_options.metrics = options_.pm_metrics;
    pm_options.drain_period_ns = kCounterDrainPeriodNs;
    for (uint32_t device : devices) {
      pm_options.device = device;
      auto sampler = PmSampler::Create(cupti_, pm_options);
      absl::Status st = sampler.status();
      if (!st.ok()) {
        pm_failures.emplace_back(device, std::string(st.message()));
        // The same refusal on every device (counter permission is machine-wide): say it once.
        if (absl::IsPermissionDenied(st)) break;
        continue;
      }
      PmSampler& s = **sampler;
      const std::string left_out = DescribeLeftOut(s.config());
      if (!left_out.empty() && !options_.pm_metrics.empty() && !rejected_reported) {
        rejected_reported = true;
        warn_(absl::StrCat("PM sampling leaves out what it cannot sample: ", left_out));
      }
      pm_.push_back(std::move(*sampler));
    }
    for (auto& line : PmFailureLines(pm_failures)) failures.push_back(std::move(line));
  }

  if (options_.nvml) {
    std::vector<nvml::DeviceIdentity> ids;
    for (uint32_t device : devices) {
      auto it = std::find_if(info.begin(), info.end(), [device](const v1::Device& d) { return d.id() == device; });
      if (it == info.end()) continue;
      nvml::DeviceIdentity id;
      id.device = device;
      id.uuid = it->uuid();
      id.pci_bus_id = it->pci_bus_id();
      ids.push_back(std::move(id));
    }
    absl::Status nvml_status;
    if (ids.empty()) {
      nvml_status = absl::UnavailableError(absl::StrCat(
          "NVML: cannot tell NVML which GPUs these are",
          info_status.ok() ? "" : absl::StrCat(" (", info_status.message(), ")")));
    } else {
      auto library = nvml::NvmlLibrary::Load(options_.nvml_loader ? options_.nvml_loader : nvml::SystemNvmlLoader());
      if (library.ok()) {
        auto sampler = nvml::NvmlSampler::Create((*library)->functions(), ids, warn_);
        if (sampler.ok()) {
          nvml_library_ = std::move(*library);
          nvml_ = std::make_unique<nvml::NvmlSampler>(std::move(*sampler));
        } else {
          nvml_status = sampler.status();
        }
      } else {
        nvml_status = library.status();
      }
    }
    if (!nvml_status.ok()) failures.push_back(absl::StrCat(nvml_status.message(), "; NVML counters are off"));
  }

  if (pm_.empty() && nvml_ == nullptr) {
    const std::string why = failures.empty() ? "both sources are switched off" : absl::StrJoin(failures, "; ");
    return absl::UnavailableError(absl::StrCat("no GPU counters can be sampled: ", why));
  }
  for (const auto& f : failures) warn_(f);
  return absl::OkStatus();
}

absl::Status GpuCounterSampler::Start() {
  std::lock_guard<std::mutex> setup(setup_mu_);
  bool prepare = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_ || stopped_) return absl::FailedPreconditionError("GPU counter sampling was already started");
    started_ = true;
    prepare = !prepared_;
    prepared_ = true;
  }
  if (prepare) prepare_status_ = PrepareSources();
  if (!prepare_status_.ok()) return prepare_status_;
  // PM sampling begins on every prepared device; one that will not start is named and left out.
  std::vector<std::pair<uint32_t, std::string>> pm_failures;
  for (auto it = pm_.begin(); it != pm_.end();) {
    if (absl::Status st = (*it)->Start(); !st.ok()) {
      pm_failures.emplace_back((*it)->device(), std::string(st.message()));
      (void)(*it)->Finish();
      it = pm_.erase(it);
    } else {
      ++it;
    }
  }
  const std::vector<std::string> pm_lines = PmFailureLines(pm_failures);
  if (pm_.empty() && nvml_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("no GPU counters can be sampled: ", absl::StrJoin(pm_lines, "; ")));
  }
  for (const auto& line : pm_lines) warn_(line);
  std::vector<std::string> names;
  for (const auto& pm : pm_) {
    for (const auto& m : pm->metrics()) {
      if (std::find(names.begin(), names.end(), m) == names.end()) names.push_back(m);
    }
  }
  if (nvml_ != nullptr) {
    for (auto& n : nvml_->counters()) names.push_back(std::move(n));
  }
  // The thread starts under the lock, so a Stop racing with this Start either comes first (and
  // nothing starts) or finds the thread to join.
  absl::Status started;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counters_ = std::move(names);
    if (stop_) {
      started = absl::CancelledError("GPU counter sampling was stopped while it started");
    } else {
      try {
        thread_ = std::thread([this] { Run(); });
      } catch (const std::system_error& e) {
        started = absl::ResourceExhaustedError(absl::StrCat("GPU counter sampling: cannot start its thread: ", e.what()));
      }
    }
  }
  if (!started.ok()) ReleaseSources();
  return started;
}

void GpuCounterSampler::Stop() {
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stop_ = true;
    thread = std::move(thread_);
  }
  cv_.notify_all();
  if (thread.joinable()) {
    thread.join();  // its last round releases the counters
    return;
  }
  // No thread: prepared and never started (the counters are enabled all the same), or a Prepare or
  // Start still setting up on another thread, which is waited for (a Start that finds stop_ set
  // releases everything itself).
  std::lock_guard<std::mutex> setup(setup_mu_);
  ReleaseSources();
}

void GpuCounterSampler::ReleaseSources() {
  for (auto& pm : pm_) (void)pm->Finish();
  pm_.clear();
  nvml_.reset();
  nvml_library_.reset();
}

std::vector<std::string> GpuCounterSampler::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

void GpuCounterSampler::Run() {
  const auto drain_period = std::chrono::nanoseconds(kCounterDrainPeriodNs);
  const auto nvml_period = std::chrono::nanoseconds(options_.nvml_period_ns);
  auto next_drain = Clock::now() + drain_period;
  auto next_nvml = Clock::now();  // a first reading at once: the series starts with the run
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const auto wake = nvml_ != nullptr ? std::min(next_drain, next_nvml) : next_drain;
    if (cv_.wait_until(lock, wake, [this] { return stop_; })) break;
    lock.unlock();
    const auto now = Clock::now();
    if (nvml_ != nullptr && now >= next_nvml) {
      ReadNvml();
      next_nvml += nvml_period;
      if (next_nvml <= now) next_nvml = now + nvml_period;  // fell behind: skip, do not burst
    }
    if (now >= next_drain) {
      std::vector<CounterBatch> batches;
      DrainPm(batches, /*last=*/false);
      TakeNvml(batches);
      if (!batches.empty()) emit_(std::move(batches));
      next_drain += drain_period;
      if (next_drain <= now) next_drain = now + drain_period;
    }
    lock.lock();
  }
  lock.unlock();
  // The end: everything PM sampling still holds, a closing NVML reading, counters released.
  std::vector<CounterBatch> batches;
  DrainPm(batches, /*last=*/true);
  if (nvml_ != nullptr) ReadNvml();
  TakeNvml(batches);
  if (!batches.empty()) emit_(std::move(batches));
}

void GpuCounterSampler::DrainPm(std::vector<CounterBatch>& out, bool last) {
  for (auto it = pm_.begin(); it != pm_.end();) {
    PmSampler& s = **it;
    const uint64_t overflows_before = s.overflows();
    auto series = last ? s.Finish() : s.Drain();
    overflows_.fetch_add(s.overflows() - overflows_before, std::memory_order_relaxed);
    if (s.overflows() > overflows_before && overflows_before == 0) {
      warn_(absl::StrCat("PM sampling on device ", s.device(),
                         ": the hardware buffer overflowed (this thread fell behind the GPU); the samples it held are "
                         "lost and sampling starts over, so the counter series has gaps. A longer interval helps"));
    }
    if (!series.ok()) {
      warn_(absl::StrCat(series.status().message(), "; PM sampling on device ", s.device(), " stopped"));
      (void)s.Finish();
      it = pm_.erase(it);
      continue;
    }
    uint64_t last_end = 0;
    for (size_t m = 0; m < series->size() && m < s.metrics().size(); ++m) {
      auto& points = (*series)[m];
      if (points.empty()) continue;
      if (m == 0) samples_.fetch_add(points.size(), std::memory_order_relaxed);
      last_end = std::max(last_end, points.back().end);
      out.push_back({s.device(), v1::COUNTER_SOURCE_PM_SAMPLING, s.metrics()[m], std::move(points)});
    }
    if (last_end != 0) CheckClock(s.device(), last_end);
    ++it;
  }
  if (last) pm_.clear();
}

void GpuCounterSampler::CheckClock(uint32_t device, uint64_t last_end) {
  if (clock_warned_) return;
  const uint64_t now = cupti_.Timestamp();
  const uint64_t off = now > last_end ? now - last_end : last_end - now;
  if (off <= kClockToleranceNs) return;
  clock_warned_ = true;
  warn_(absl::StrCat("PM sampling timestamps on device ", device, " are ", off / 1'000'000,
                     " ms off the CUPTI clock; its counter series will not line up with the timeline"));
}

void GpuCounterSampler::ReadNvml() {
  for (size_t i = 0; i < nvml_->devices().size(); ++i) {
    const uint64_t t = cupti_.Timestamp();
    const uint32_t device = nvml_->devices()[i];
    const std::vector<nvml::NvmlValue> values = nvml_->Read(i);
    if (!values.empty()) samples_.fetch_add(1, std::memory_order_relaxed);
    for (const nvml::NvmlValue& v : values) {
      auto it = std::find_if(nvml_pending_.begin(), nvml_pending_.end(), [&](const CounterBatch& b) {
        return b.device == device && b.name == v.name;
      });
      if (it == nvml_pending_.end()) {
        nvml_pending_.push_back({device, v1::COUNTER_SOURCE_NVML, v.name, {}});
        it = nvml_pending_.end() - 1;
      }
      it->points.push_back({t, t, v.value});
    }
  }
}

void GpuCounterSampler::TakeNvml(std::vector<CounterBatch>& out) {
  for (auto& b : nvml_pending_) {
    if (!b.points.empty()) out.push_back(std::move(b));
  }
  nvml_pending_.clear();
}

}  // namespace cuscope::cupti
