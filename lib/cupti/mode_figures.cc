#include "lib/cupti/mode_figures.h"

#include <utility>

#include "lib/core/record_codec/monitor_interval.h"

namespace cuscope::cupti {
namespace {

// Records of an interval keep arriving for a while after it ends: CUPTI hands buffers over at
// least every flush period, and a kernel's record only once it has finished.
uint64_t LagNs(const settings::Config& config) { return (2ull * config.flush_period_ms + 250) * 1'000'000ull; }

}  // namespace

std::unique_ptr<ModeFigures> ModeFigures::ForMode(const settings::Config& config, CuptiApi& cupti, Outlets outlets) {
  if (config.mode == settings::CollectionMode::kMonitor) {
    return std::unique_ptr<ModeFigures>(new ModeFigures(Kind::kMonitor, config, cupti, std::move(outlets)));
  }
  if (config.mode == settings::CollectionMode::kFlight && config.flight_idle_share > 0) {
    return std::unique_ptr<ModeFigures>(new ModeFigures(Kind::kFlightIdleTrigger, config, cupti, std::move(outlets)));
  }
  return nullptr;
}

ModeFigures::ModeFigures(Kind kind, const settings::Config& config, CuptiApi& cupti, Outlets outlets)
    : kind_(kind), lag_ns_(LagNs(config)), cupti_(cupti), outlets_(std::move(outlets)) {
  monitor::IntervalAggregator::Options options;
  options.interval_ns = static_cast<uint64_t>(config.monitor_interval_ms) * 1'000'000ull;
  options.top_kernels = config.monitor_top_kernels;
  options.api_name = [&cupti](v1::ApiDomain domain, uint32_t cbid) { return cupti.CallbackName(domain, cbid); };
  options.sampled = config.samples_by_duty_cycle();
  aggregator_ = std::make_unique<monitor::IntervalAggregator>(std::move(options), cupti.Timestamp());
  if (kind_ == Kind::kFlightIdleTrigger) {
    idle_trigger_ = std::make_unique<monitor::IdleTrigger>(monitor::IdleTriggerOptions{
        .idle_share = config.flight_idle_share,
        .window_ns = static_cast<uint64_t>(config.flight_idle_window_ms) * 1'000'000ull});
  }
}

void ModeFigures::QueueSampleEdge(bool open, uint64_t time, double weight) {
  std::lock_guard<std::mutex> lock(edges_mu_);
  sample_edges_.push_back({open, time, weight});
}

void ModeFigures::ApplySampleEdges() {
  std::vector<SampleEdge> edges;
  {
    std::lock_guard<std::mutex> lock(edges_mu_);
    edges.swap(sample_edges_);
  }
  for (const SampleEdge& e : edges) {
    if (e.open) {
      aggregator_->OpenSample(e.time, e.weight);
    } else {
      aggregator_->CloseSample(e.time, e.weight);
    }
  }
}

void ModeFigures::AddCounter(uint32_t device, v1::CounterSource source, const std::string& name,
                             const core::CounterPoint& p) {
  if (kind_ == Kind::kMonitor) aggregator_->AddCounter(device, source, name, p);
}

bool ModeFigures::Close(bool all, uint64_t dropped_total, core::ChunkBuilder* trace) {
  ApplySampleEdges();
  if (kind_ == Kind::kMonitor) {
    // Flight mode's figures only feed its trigger: a dropped record there is the ring's concern.
    if (dropped_total > dropped_counted_) aggregator_->CountDropped(dropped_total - dropped_counted_);
    dropped_counted_ = dropped_total;
  }
  const uint64_t now = cupti_.Timestamp();
  std::vector<monitor::IntervalFigures> closed =
      all ? aggregator_->CloseAll(now) : aggregator_->CloseBefore(now > lag_ns_ ? now - lag_ns_ : 0);
  if (closed.empty()) return false;
  if (outlets_.intervals_closed) outlets_.intervals_closed(closed);
  if (kind_ == Kind::kFlightIdleTrigger) {
    if (all) return false;  // at the end, to the hook alone: nothing is left to trigger
    for (const auto& f : closed) {
      if (auto idle = idle_trigger_->Add(f); idle.has_value() && outlets_.gpu_idle) outlets_.gpu_idle(*idle);
    }
    return false;
  }
  if (trace == nullptr) return false;
  for (const auto& f : closed) {
    core::EncodeMonitorInterval(f, [trace](std::string_view name) { return trace->InternString(name); },
                                trace->AddMonitorInterval());
  }
  return true;
}

}  // namespace cuscope::cupti
