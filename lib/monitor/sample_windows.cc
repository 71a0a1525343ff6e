#include "lib/monitor/sample_windows.h"

#include <algorithm>
#include <cmath>

namespace cuscope::monitor {

using intervals::Interval;
using intervals::IntervalSet;

double MeanBound95(const std::vector<double>& samples) {
  const size_t n = samples.size();
  if (n < 2) return -1;
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(n);
  double squares = 0;
  for (double x : samples) squares += (x - mean) * (x - mean);
  const double sd = std::sqrt(squares / static_cast<double>(n - 1));
  return 1.96 * sd / std::sqrt(static_cast<double>(n));
}

void SampleWindows::Open(uint64_t on_ns, double weight) {
  if (!windows_.empty() && windows_.back().off_ns == 0) return;  // already open
  SampleWindow w;
  w.on_ns = on_ns;
  w.weight = weight >= 1 ? weight : 1;
  windows_.push_back(std::move(w));
}

void SampleWindows::Close(uint64_t off_ns, double weight) {
  if (windows_.empty() || windows_.back().off_ns != 0) return;
  windows_.back().off_ns = std::max(off_ns, windows_.back().on_ns);
  if (weight > 0) windows_.back().weight = std::max(weight, 1.0);
}

SampleWindow* SampleWindows::WindowAt(uint64_t time) {
  // The last window opened at or before `time`.
  auto it = std::upper_bound(windows_.begin(), windows_.end(), time,
                             [](uint64_t t, const SampleWindow& w) { return t < w.on_ns; });
  if (it == windows_.begin()) return nullptr;
  return &*std::prev(it);
}

void SampleWindows::Launch(uint64_t call_end_ns) {
  SampleWindow* w = WindowAt(call_end_ns);
  if (w == nullptr || (w->off_ns != 0 && call_end_ns > w->off_ns)) return;
  if (w->first_launch_end_ns == 0 || call_end_ns < w->first_launch_end_ns) w->first_launch_end_ns = call_end_ns;
  ++w->launches;
}

void SampleWindows::Work(uint32_t device, uint64_t start_ns, uint64_t end_ns, uint64_t issued_ns) {
  SampleWindow* w = WindowAt(issued_ns);
  if (w == nullptr) return;
  SampleWindow::Device& d = w->devices[device];
  d.first_start_ns = std::min(d.first_start_ns, start_ns);
  d.last_end_ns = std::max(d.last_end_ns, end_ns);
  ++d.items;
}

std::vector<SampleWindow> SampleWindows::TakeBefore(uint64_t end_ns) {
  std::vector<SampleWindow> taken;
  while (!windows_.empty() && windows_.front().on_ns < end_ns) {
    SampleWindow& w = windows_.front();
    if (w.off_ns != 0 && w.off_ns <= end_ns) {
      taken.push_back(std::move(w));
      windows_.pop_front();
      continue;
    }
    // Open past the interval's end: this interval gets its part, the next one the rest.
    SampleWindow part = w;
    part.off_ns = end_ns;
    taken.push_back(std::move(part));
    w.on_ns = end_ns;
    w.first_launch_end_ns = 0;
    w.launches = 0;
    w.devices.clear();
    break;
  }
  return taken;
}

namespace {

// One window's host time within `span` (an open window runs to its end).
uint64_t HostTimeOf(const SampleWindow& w, Interval span) {
  const uint64_t from = std::max(w.on_ns, span.begin);
  const uint64_t to = std::min(w.off_ns == 0 ? span.end : w.off_ns, span.end);
  return to > from ? to - from : 0;
}

}  // namespace

uint64_t SampleWindows::HostTime(const std::vector<SampleWindow>& windows, Interval span) {
  uint64_t total = 0;
  for (const SampleWindow& w : windows) total += HostTimeOf(w, span);
  return total;
}

double SampleWindows::RepresentedTime(const std::vector<SampleWindow>& windows, Interval span) {
  double total = 0;
  for (const SampleWindow& w : windows) total += w.weight * static_cast<double>(HostTimeOf(w, span));
  return total;
}

double SampleWindows::WorkScale(const std::vector<SampleWindow>& windows, uint32_t device, double otherwise) {
  double items = 0, weighted = 0;
  for (const SampleWindow& w : windows) {
    const auto d = w.devices.find(device);
    if (d == w.devices.end()) continue;
    items += static_cast<double>(d->second.items);
    weighted += w.weight * static_cast<double>(d->second.items);
  }
  return items > 0 ? weighted / items : otherwise;
}

double SampleWindows::LaunchScale(const std::vector<SampleWindow>& windows, double otherwise) {
  double launches = 0, weighted = 0;
  for (const SampleWindow& w : windows) {
    launches += static_cast<double>(w.launches);
    weighted += w.weight * static_cast<double>(w.launches);
  }
  return launches > 0 ? weighted / launches : otherwise;
}

double SampleWindows::WeightedLength(const IntervalSet& set, const std::vector<std::pair<Interval, double>>& pieces) {
  double total = 0;
  for (const auto& [piece, weight] : pieces) total += weight * static_cast<double>(intervals::CoveredLength(set, piece));
  return total;
}

double SampleWindows::CountBound(const std::vector<SampleWindow>& windows, Interval span) {
  std::vector<double> rates;
  double sum = 0;
  for (const SampleWindow& w : windows) {
    const uint64_t host = HostTimeOf(w, span);
    if (host == 0) continue;
    uint64_t items = 0;
    for (const auto& [device, d] : w.devices) items += d.items;
    rates.push_back(static_cast<double>(items) / static_cast<double>(host));
    sum += rates.back();
  }
  const double bound = MeanBound95(rates);
  if (bound < 0) return -1;
  if (sum == 0) return 0;
  return bound / (sum / static_cast<double>(rates.size()));
}

SampledDevice SampleWindows::Device(const std::vector<SampleWindow>& windows, uint32_t device, const IntervalSet& busy,
                                    Interval span) {
  SampledDevice out;
  std::vector<std::pair<Interval, double>> pieces;
  std::vector<Interval> inferred;
  for (const SampleWindow& w : windows) {
    const auto d = w.devices.find(device);
    const uint64_t off = w.off_ns == 0 ? span.end : w.off_ns;
    const uint64_t last_end = d == w.devices.end() ? 0 : d->second.last_end_ns;
    const uint64_t begin = std::max(w.on_ns, span.begin);
    const uint64_t end = std::min(std::max(off, last_end), span.end);
    if (end <= begin) continue;
    pieces.push_back({{begin, end}, w.weight});
    // Before the window's first work starts: busy with earlier work when its launch waited for it.
    if (d != w.devices.end() && w.first_launch_end_ns != 0 && d->second.first_start_ns > begin &&
        d->second.first_start_ns > w.first_launch_end_ns + kQueuedNs) {
      inferred.push_back({begin, std::min(d->second.first_start_ns, end)});
    }
  }
  // A window's GPU side may run into the next window's: each stretch counts once, for the window
  // that opened first.
  std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i + 1 < pieces.size()) pieces[i].first.end = std::min(pieces[i].first.end, pieces[i + 1].first.begin);
    pieces[i].first.end = std::max(pieces[i].first.end, pieces[i].first.begin);
  }
  std::erase_if(pieces, [](const auto& p) { return p.first.empty(); });
  std::vector<Interval> plain;
  for (const auto& [piece, weight] : pieces) plain.push_back(piece);
  const IntervalSet observed = intervals::UnionOf(std::move(plain));
  const IntervalSet work = intervals::Union(busy, intervals::UnionOf(std::move(inferred)));
  out.observed_ns = intervals::TotalLength(observed);
  for (const auto& [piece, weight] : pieces) out.observed_weighted_ns += weight * static_cast<double>(piece.end - piece.begin);
  const double busy_weighted = WeightedLength(work, pieces);
  out.busy_share = out.observed_weighted_ns > 0 ? busy_weighted / out.observed_weighted_ns : 0;
  out.idle = intervals::Subtract(observed, work);
  std::vector<double> shares;
  for (const auto& [piece, weight] : pieces) {
    const uint64_t length = piece.end - piece.begin;
    shares.push_back(100.0 * static_cast<double>(intervals::CoveredLength(work, piece)) / static_cast<double>(length));
  }
  out.busy_share_bound = MeanBound95(shares);
  out.count_bound = CountBound(windows, span);
  out.pieces = std::move(pieces);
  return out;
}

}  // namespace cuscope::monitor
