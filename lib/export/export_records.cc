// The export pass's writers of one chunk's records: GPU operations (kernels, copies, memsets, with
// their flows and busy time), API calls, NVTX ranges and marks, and the collector's overhead.
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/core/api_names.h"
#include "lib/core/kernel_names.h"
#include "lib/core/kernel_selection.h"
#include "lib/export/export_names.h"
#include "lib/export/export_pass.h"

namespace cuscope::exporter {

std::pair<uint64_t, uint64_t> ExportPass::KernelSpan(const core::KernelRow& k, bool replayed) const {
  const uint64_t end = std::max(k.start, k.end);
  if (end > k.start || !replayed) return {k.start, end};
  // The last METRICS window that starts at or before the kernel, if the kernel is inside it.
  auto after = std::upper_bound(scan_.metric_spans.begin(), scan_.metric_spans.end(), k.start,
                                [](uint64_t t, const std::pair<uint64_t, uint64_t>& w) { return t < w.first; });
  if (after == scan_.metric_spans.begin()) return {k.start, end};
  const auto& w = *std::prev(after);
  return {k.start, std::max(end, w.second)};
}

absl::Status ExportPass::ExportKernel(const core::KernelRow& k, const GpuOp& op, const core::Dictionary& dict) {
  const v1::KernelSignature& sig = dict.signature(k.signature);
  const SignatureText& text = Signature(k.signature, dict);
  const bool replayed = op.replayed;
  args_.clear();
  args_.push_back(Arg::String(F(Fixed::kArgGrid), Keyed(NameKind::kDims, text.grid_id, text.grid)));
  args_.push_back(Arg::String(F(Fixed::kArgBlock), Keyed(NameKind::kDims, text.block_id, text.block)));
  args_.push_back(Arg::Uint(F(Fixed::kArgRegisters), sig.registers_per_thread()));
  // Shared memory only where there is some: most kernels have none, and every byte is per kernel.
  if (sig.static_shared_memory() != 0)
    args_.push_back(Arg::Int(F(Fixed::kArgStaticShared), sig.static_shared_memory()));
  if (sig.dynamic_shared_memory() != 0) {
    args_.push_back(Arg::Int(F(Fixed::kArgDynamicShared), sig.dynamic_shared_memory()));
  }
  args_.push_back(Arg::Uint(F(Fixed::kArgCorrelation), k.correlation_id));
  if (k.graph_id != 0) {
    args_.push_back(Arg::Uint(F(Fixed::kArgGraph), k.graph_id));
    args_.push_back(Arg::Uint(F(Fixed::kArgGraphNode), k.graph_node_id));
  }
  if (replayed) args_.push_back(Arg::Bool(F(Fixed::kArgReplayed), true));
  args_.push_back(Arg::String(F(Fixed::kArgMangled), Keyed(NameKind::kString, sig.name(), dict.str(sig.name()))));
  if (scan_.stacks) {
    if (const uint32_t stack = scan_.stacks->StackOf(k); stack != 0) {
      if (auto it = scan_.launch_site_text.find(stack); it != scan_.launch_site_text.end()) {
        args_.push_back(Arg::String(F(Fixed::kArgLaunchedFrom), Keyed(NameKind::kLaunchSite, stack, it->second)));
      }
    }
  }
  Slice s;
  s.track = op.track;
  s.start = op.start;
  s.end = op.end;
  s.name = replayed ? Keyed(NameKind::kReplayedKernel, sig.name(), text.replayed_name)
                    : Keyed(NameKind::kKernel, sig.name(), text.name);
  s.category = F(replayed ? Fixed::kCatReplayedKernel : Fixed::kCatKernel);
  s.args = args_;
  s.flow_in = FlowIn(k.correlation_id, k.graph_id != 0);
  ++summary_->kernels;
  return Emit(s);
}

absl::Status ExportPass::ExportGpu(const core::DecodedChunk& chunk, const core::Dictionary& dict) {
  ops_.clear();
  for (uint32_t i = 0; i < chunk.kernels.size(); ++i) {
    const core::KernelRow& k = chunk.kernels[i];
    const bool replayed = Replayed(k);
    const auto [start, end] = KernelSpan(k, replayed);
    ops_.push_back({start, end, StreamTrackId(dict.signature(k.signature).device(), k.stream), i, 0, replayed});
  }
  for (uint32_t i = 0; i < chunk.memcpys.size(); ++i) {
    const core::MemcpyRecord& m = chunk.memcpys[i];
    ops_.push_back({m.start, std::max(m.start, m.end), StreamTrackId(m.device, m.stream), i, 1});
  }
  for (uint32_t i = 0; i < chunk.memsets.size(); ++i) {
    const core::MemsetRecord& m = chunk.memsets[i];
    ops_.push_back({m.start, std::max(m.start, m.end), StreamTrackId(m.device, m.stream), i, 2});
  }
  SortByEnd(&ops_);

  for (auto& [device, intervals] : busy_) intervals.clear();
  // The last device's list; null until the first operation (no device id can mean "none").
  uint32_t busy_device = 0;
  std::vector<std::pair<uint64_t, uint64_t>>* busy = nullptr;
  auto add_busy = [&](uint32_t device, uint64_t start, uint64_t end) {
    if (busy == nullptr || device != busy_device) {
      busy_device = device;
      busy = &busy_[device];
    }
    busy->push_back({start, end});
  };

  for (const GpuOp& op : ops_) {
    if (op.kind == 0) {
      const core::KernelRow& k = chunk.kernels[op.index];
      // Replayed launches are the profiler's time, not the program's (as in the analyzer).
      if (!op.replayed) add_busy(dict.signature(k.signature).device(), op.start, op.end);
      if (auto st = ExportKernel(k, op, dict); !st.ok()) return st;
      continue;
    }
    args_.clear();
    Slice s;
    s.track = op.track;
    s.start = op.start;
    s.end = op.end;
    uint64_t correlation = 0;
    bool graph = false;
    if (op.kind == 1) {
      const core::MemcpyRecord& m = chunk.memcpys[op.index];
      add_busy(m.device, op.start, op.end);
      // "Memcpy HtoD": the name carries the direction, as in Nsight Systems.
      s.name = CopyName(m.copy_kind);
      s.category = F(Fixed::kCatMemcpy);
      args_.push_back(Arg::Uint(F(Fixed::kArgBytes), m.bytes));
      args_.push_back(Arg::String(F(Fixed::kArgCopyKind), CopyKind(m.copy_kind)));
      args_.push_back(Arg::String(F(Fixed::kArgSource), MemoryKind(m.src_kind)));
      args_.push_back(Arg::String(F(Fixed::kArgDestination), MemoryKind(m.dst_kind)));
      if (op.end > op.start) {
        args_.push_back(Arg::Double(F(Fixed::kArgThroughput),
                                    static_cast<double>(m.bytes) / static_cast<double>(op.end - op.start)));
      }
      args_.push_back(Arg::Bool(F(Fixed::kArgAsync), m.async));
      args_.push_back(Arg::Uint(F(Fixed::kArgCorrelation), m.correlation_id));
      if (m.graph_id != 0) args_.push_back(Arg::Uint(F(Fixed::kArgGraph), m.graph_id));
      correlation = m.correlation_id;
      graph = m.graph_id != 0;
      ++summary_->memcpys;
    } else {
      const core::MemsetRecord& m = chunk.memsets[op.index];
      add_busy(m.device, op.start, op.end);
      s.name = F(Fixed::kNameMemset);
      s.category = F(Fixed::kCatMemset);
      args_.push_back(Arg::Uint(F(Fixed::kArgBytes), m.bytes));
      args_.push_back(Arg::Uint(F(Fixed::kArgValue), m.value));
      args_.push_back(Arg::String(F(Fixed::kArgMemoryKind), MemoryKind(m.memory_kind)));
      args_.push_back(Arg::Bool(F(Fixed::kArgAsync), m.async));
      args_.push_back(Arg::Uint(F(Fixed::kArgCorrelation), m.correlation_id));
      if (m.graph_id != 0) args_.push_back(Arg::Uint(F(Fixed::kArgGraph), m.graph_id));
      correlation = m.correlation_id;
      graph = m.graph_id != 0;
      ++summary_->memsets;
    }
    s.args = args_;
    s.flow_in = FlowIn(correlation, graph);
    if (auto st = Emit(s); !st.ok()) return st;
  }
  for (auto& [device, intervals] : busy_) utilization_.Add(device, &intervals);
  return absl::OkStatus();
}

absl::Status ExportPass::ExportApi(const core::DecodedChunk& chunk, const core::Dictionary& dict) {
  const auto& calls = chunk.api_calls;
  order_.resize(calls.size());
  for (uint32_t i = 0; i < calls.size(); ++i) order_[i] = i;
  auto before = [&calls](uint32_t a, uint32_t b) {
    return calls[a].end != calls[b].end ? calls[a].end < calls[b].end : calls[a].start > calls[b].start;
  };
  if (!std::is_sorted(order_.begin(), order_.end(), before)) std::stable_sort(order_.begin(), order_.end(), before);
  for (uint32_t i : order_) {
    const core::ApiCallRow& a = calls[i];
    const FunctionText& f = Function(a.function, dict);
    args_.clear();
    args_.push_back(Arg::Uint(F(Fixed::kArgCorrelation), a.correlation_id));
    if (a.return_code != 0) args_.push_back(Arg::Uint(F(Fixed::kArgReturnCode), a.return_code));
    Slice s;
    s.track = TrackId(TrackKind::kThread, a.thread);
    s.start = a.start;
    s.end = std::max(a.start, a.end);
    s.name = Keyed(NameKind::kApi, a.function, f.name);
    s.category = F(f.driver ? Fixed::kCatDriver : Fixed::kCatRuntime);
    s.args = args_;
    // The arrow starts at the runtime call when a runtime call and the driver call inside it share
    // the id: that is the call the program made.
    if (a.correlation_id != 0 && scan_.gpu_correlations.Contains(a.correlation_id) &&
        !(f.driver && scan_.runtime_correlations.Contains(a.correlation_id))) {
      s.flow_out = a.correlation_id;
      ++summary_->flows;
    }
    ++summary_->api_calls;
    if (auto st = Emit(s); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status ExportPass::ExportRange(const ClosedRange& r, const core::Dictionary& dict, bool unterminated) {
  args_.clear();
  if (r.domain != 0)
    args_.push_back(Arg::String(F(Fixed::kArgDomain), Keyed(NameKind::kString, r.domain, dict.str(r.domain))));
  if (unterminated) args_.push_back(Arg::Bool(F(Fixed::kArgUnterminated), true));
  Slice s;
  s.track = TrackId(TrackKind::kNvtx, r.thread);
  s.start = r.start;
  s.end = r.end;
  s.name = r.name != 0 ? Keyed(NameKind::kString, r.name, dict.str(r.name)) : F(Fixed::kNameUnnamedRange);
  s.category = F(Fixed::kCatNvtx);
  s.args = args_;
  ++summary_->nvtx_ranges;
  return Emit(s);
}

absl::Status ExportPass::ExportNvtx(const core::DecodedChunk& chunk, const core::Dictionary& dict) {
  ranges_.clear();
  for (const core::NvtxRow& n : chunk.nvtx) {
    switch (n.kind) {
      case v1::NVTX_KIND_RANGE_START:
      case v1::NVTX_KIND_RANGE_END:
        if (std::optional<NvtxRangePairing::Range> r = nvtx_pairing_.Add(n)) {
          ranges_.push_back({r->start.time, std::max(r->start.time, r->end.time), r->start.name, r->start.domain,
                             r->start.thread});
        }
        break;
      case v1::NVTX_KIND_MARK: {
        args_.clear();
        if (n.domain != 0) {
          args_.push_back(Arg::String(F(Fixed::kArgDomain), Keyed(NameKind::kString, n.domain, dict.str(n.domain))));
        }
        Instant i;
        i.track = TrackId(TrackKind::kNvtx, n.thread);
        i.time = n.time;
        i.name = n.name != 0 ? Keyed(NameKind::kString, n.name, dict.str(n.name)) : F(Fixed::kNameUnnamedRange);
        i.category = F(Fixed::kCatNvtx);
        i.args = args_;
        ++summary_->nvtx_marks;
        if (auto st = sink_->AddInstant(i); !st.ok()) return st;
        break;
      }
      default: break;
    }
  }
  SortByEnd(&ranges_);
  for (const ClosedRange& r : ranges_) {
    if (auto st = ExportRange(r, dict, false); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status ExportPass::ExportOverheads(const core::DecodedChunk& chunk, const core::Dictionary& dict) {
  ranges_.clear();
  for (const core::OverheadRow& o : chunk.overheads)
    ranges_.push_back({o.start, std::max(o.start, o.end), o.kind, 0, o.thread});
  SortByEnd(&ranges_);
  for (const ClosedRange& r : ranges_) {
    Slice s;
    s.track = TrackId(TrackKind::kOverhead, r.thread);
    s.start = r.start;
    s.end = r.end;
    s.name = Keyed(NameKind::kString, r.name, dict.str(r.name));
    s.category = F(Fixed::kCatOverhead);
    ++summary_->overheads;
    if (auto st = Emit(s); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace cuscope::exporter
