#include "lib/export/scan.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_set.h"

namespace cuscope::exporter {

bool ScanResult::Profiled(uint64_t correlation_id) const {
  if (stuck_correlation && correlation_id == stuck_correlation->id) return false;  // ties nothing
  return correlation_id != 0 &&
         std::binary_search(profiled_correlations.begin(), profiled_correlations.end(), correlation_id);
}

ScanResult Scan(core::TraceReader& reader, const std::function<void(core::Dictionary&)>& add_source_lines) {
  ScanResult scan;
  scan.header = reader.header();
  absl::flat_hash_set<std::pair<uint32_t, uint32_t>> streams;
  auto widen = [&scan](uint64_t start, uint64_t end) {
    scan.first_ns = std::min(scan.first_ns, start);
    scan.last_ns = std::max(scan.last_ns, std::max(start, end));
  };
  // Empty until the first operation: any (device, stream) pair is one a row can carry.
  std::optional<std::pair<uint32_t, uint32_t>> last_stream;
  auto gpu = [&](uint32_t device, uint32_t stream, uint64_t start, uint64_t end, uint64_t correlation) {
    // Operations come in runs on one stream: skip the set while the stream stays the same.
    const std::pair<uint32_t, uint32_t> here{device, stream};
    if (last_stream != here) {
      last_stream = here;
      streams.insert(here);
    }
    widen(start, end);
    if (correlation != 0) scan.gpu_correlations.Insert(correlation);
  };
  auto thread = [&](uint32_t id) -> ThreadUse& {
    ThreadUse& use = scan.threads[id];
    const v1::HostThread& t = reader.dictionary().thread(id);
    use.pid = t.pid();
    use.tid = t.tid();
    return use;
  };

  core::StuckCorrelationVote vote;
  core::DecodedChunk chunk;
  std::vector<core::LaunchStackRow> launch_stacks;
  std::vector<core::GraphNodeRow> graph_nodes;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&chunk);
    if (!more.ok()) {
      scan.corruption = more.status();
      break;
    }
    if (!*more) break;
    ++scan.chunks;
    const core::Dictionary& dict = reader.dictionary();
    for (const core::KernelRow& k : chunk.kernels) {
      gpu(dict.signature(k.signature).device(), k.stream, k.start, k.end, k.correlation_id);
      vote.Vote(k);
    }
    for (const core::MemcpyRecord& m : chunk.memcpys) gpu(m.device, m.stream, m.start, m.end, m.correlation_id);
    for (const core::MemsetRecord& m : chunk.memsets) gpu(m.device, m.stream, m.start, m.end, m.correlation_id);
    uint32_t last_thread = 0;
    for (const core::ApiCallRow& a : chunk.api_calls) {
      widen(a.start, a.end);
      if (a.correlation_id != 0) {
        scan.api_correlations.Insert(a.correlation_id);
        if (dict.function(a.function).domain() == v1::API_DOMAIN_RUNTIME) {
          scan.runtime_correlations.Insert(a.correlation_id);
        }
      }
      // Calls come in runs from one thread: skip the map lookup while the thread stays the same.
      if (a.thread != last_thread) {
        thread(a.thread).api = true;
        last_thread = a.thread;
      }
    }
    for (const core::NvtxRow& n : chunk.nvtx) {
      widen(n.time, n.time);
      thread(n.thread).nvtx = true;
    }
    for (const core::OverheadRow& o : chunk.overheads) {
      widen(o.start, o.end);
      thread(o.thread).overhead = true;
    }
    for (const core::MetricRow& m : chunk.metrics) {
      if (m.correlation_id != 0) scan.profiled_correlations.push_back(m.correlation_id);
    }
    for (const v1::CaptureWindow& w : chunk.windows) {
      if (w.start_ns() != 0) widen(w.start_ns(), w.start_ns());
      if (w.end_ns() != 0) widen(w.end_ns(), w.end_ns());
      scan.windows.push_back(w);
    }
    launch_stacks.insert(launch_stacks.end(), chunk.launch_stacks.begin(), chunk.launch_stacks.end());
    graph_nodes.insert(graph_nodes.end(), chunk.graph_nodes.begin(), chunk.graph_nodes.end());
    scan.kernels += chunk.kernels.size();
    scan.api_calls += chunk.api_calls.size();
    scan.memcpys += chunk.memcpys.size();
    scan.memsets += chunk.memsets.size();
    scan.nvtx_markers += chunk.nvtx.size();
    scan.overheads += chunk.overheads.size();
  }
  scan.tail_bytes_dropped = reader.tail_bytes_dropped();

  scan.streams.assign(streams.begin(), streams.end());
  std::sort(scan.streams.begin(), scan.streams.end());
  for (const auto& [device, stream] : scan.streams) {
    if (scan.devices.empty() || scan.devices.back() != device) scan.devices.push_back(device);
  }
  std::sort(scan.profiled_correlations.begin(), scan.profiled_correlations.end());
  scan.profiled_correlations.erase(std::unique(scan.profiled_correlations.begin(), scan.profiled_correlations.end()),
                                   scan.profiled_correlations.end());
  for (const v1::CaptureWindow& w : scan.windows) {
    if (w.kind() != v1::WINDOW_KIND_METRICS || w.start_ns() == 0) continue;
    scan.metric_spans.emplace_back(w.start_ns(), std::max(w.start_ns(), w.end_ns() != 0 ? w.end_ns() : scan.last_ns));
  }
  std::sort(scan.metric_spans.begin(), scan.metric_spans.end());
  scan.stuck_vote = vote;
  if (!launch_stacks.empty() || !graph_nodes.empty()) {
    scan.stacks.emplace(launch_stacks, graph_nodes);
    // Every stack is defined by now: the dictionary is the whole file's.
    // Copied only to add source lines: the reader's is the file's as read.
    std::optional<core::Dictionary> enriched;
    if (add_source_lines) add_source_lines(enriched.emplace(reader.dictionary()));
    const core::Dictionary& dict = enriched ? *enriched : reader.dictionary();
    const analysis::KernelNameSet kernels = analysis::KernelNames(dict);
    for (uint32_t stack = 1; stack <= dict.stack_count(); ++stack) {
      scan.launch_site_text[stack] = analysis::FrameText(dict, analysis::LaunchSiteFrame(dict, stack, kernels));
    }
  }
  return scan;
}

void ConfirmStuckCorrelation(core::TraceReader& reader, ScanResult* scan) {
  if (!scan->stuck_vote.HasCandidate()) return;
  core::DecodedChunk chunk;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&chunk);
    if (!more.ok() || !*more) break;
    for (const core::KernelRow& k : chunk.kernels) scan->stuck_vote.Count(k);
  }
  scan->stuck_correlation = scan->stuck_vote.Result();
}

}  // namespace cuscope::exporter
