#include "lib/cupti/trace_header.h"

#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include "lib/core/counter_names.h"
#include "lib/process/launch_place.h"
#include "lib/core/version.h"
#include "lib/cupti/pm_sampling_config.h"

namespace cuscope::cupti {
namespace {

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

uint64_t RealtimeNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// The kernel's id of this boot: traces with the same one on the same host share CUPTI's clock.
std::string BootId() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(f, id);
  return id.size() <= 64 ? id : "";
}

void AddSession(const std::string& entry, CuptiApi& cupti, uint64_t start_ns, v1::Session* session) {
  session->set_pid(static_cast<uint32_t>(::getpid()));
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) == 0) session->set_host(host);
  for (auto& a : CommandLine()) session->add_command_line(a);
  session->set_start_time_ns(start_ns);
  session->set_cupti_version(cupti.Version());
  session->set_entry(entry);
  const process::LaunchPlace place = process::CurrentLaunchPlace();
  session->set_rank(place.rank);
  session->set_local_rank(place.local_rank);
  session->set_world_size(place.world_size);
  session->set_local_world_size(place.local_world_size);
  session->set_node_rank(place.node_rank);
  session->set_launcher(place.launcher.substr(0, 256));
  session->set_job_id(place.job_id.substr(0, 256));
  session->set_boot_id(BootId());
  const v1::ClockReference clocks = ReadClockReference(cupti);
  session->set_clock_ref_cupti_ns(clocks.cupti_ns());
  session->set_clock_ref_realtime_ns(clocks.realtime_ns());
  session->set_clock_ref_monotonic_ns(MonotonicNow());
  session->set_library_version(core::kVersion);
}

void AddConfig(const settings::Config& config, v1::CaptureConfig* cfg) {
  for (const auto& k : config.activity_kinds) cfg->add_activity_kinds(k);
  cfg->set_buffer_bytes(config.buffer_bytes);
  cfg->set_buffer_pool_cap_bytes(config.buffer_pool_cap_bytes);
  cfg->set_flush_period_ms(config.flush_period_ms);
  cfg->set_delay_seconds(config.delay_seconds);
  cfg->set_duration_seconds(config.duration_seconds);
  cfg->set_profiler_api_gated(config.capture_range == "cudaProfilerApi");
  for (const auto& [k, v] : config.settings) (*cfg->mutable_settings())[k] = v;
  for (const auto& m : config.metrics) cfg->add_metrics(m);
  cfg->set_top_down_kernels(config.top_down_kernels);
  if (config.top_down_kernels > 0) cfg->set_top_down_launches(static_cast<uint32_t>(config.top_down_launches));
  if (!config.metrics.empty()) cfg->set_replay_mode(v1::REPLAY_MODE_KERNEL);
  if (config.gpu_metrics) {
    // Every device is filled in with the header's device list when it is written.
    for (uint32_t d : config.gpu_metrics_devices) cfg->add_sampled_devices(d);
    cfg->set_sampling_interval_ns(1'000'000'000ull / config.gpu_metrics_frequency_hz);
    for (const auto& m : DefaultPmSamplingMetrics()) cfg->add_sampled_counters(m);
    for (const char* n : core::counter::kNvmlCounters) cfg->add_sampled_counters(n);
  }
}

}  // namespace

v1::ClockReference ReadClockReference(CuptiApi& cupti) {
  const uint64_t before = RealtimeNow();
  const uint64_t cupti_ns = cupti.Timestamp();
  const uint64_t after = RealtimeNow();
  v1::ClockReference ref;
  ref.set_cupti_ns(cupti_ns);
  ref.set_realtime_ns(before + (after - before) / 2);
  ref.set_uncertainty_ns((after - before + 1) / 2);
  return ref;
}

v1::Header BuildTraceHeader(const settings::Config& config, const std::string& entry, CuptiApi& cupti, uint64_t start_ns) {
  v1::Header h;
  AddSession(entry, cupti, start_ns, h.mutable_session());
  AddConfig(config, h.mutable_config());
  return h;
}

}  // namespace cuscope::cupti
