#include "lib/export/exporter.h"

#include <sys/stat.h>

#include <algorithm>
#include <tuple>
#include <array>
#include <deque>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/core/api_names.h"
#include "lib/core/kernel_names.h"
#include "lib/core/kernel_selection.h"
#include "lib/core/output_file.h"
#include "lib/core/trace_reader.h"
#include "lib/export/chrome_json_writer.h"
#include "lib/export/export_names.h"
#include "lib/export/findings_pass.h"
#include "lib/export/lane_allocator.h"
#include "lib/export/nvtx_range_pairing.h"
#include "lib/export/perfetto_writer.h"
#include "lib/export/scan.h"
#include "lib/export/track_ids.h"
#include "lib/export/utilization.h"

namespace cuscope::exporter {
namespace {

std::string ProcessName(const v1::Header& header, uint32_t pid) {
  const v1::Session& s = header.session();
  if (pid == s.pid() && s.command_line_size() > 0) {
    const std::string& program = s.command_line(0);
    const size_t slash = program.rfind('/');
    return slash == std::string::npos ? program : program.substr(slash + 1);
  }
  return absl::StrCat("process ", pid);
}

std::string DeviceName(const v1::Header& header, uint32_t device) {
  for (const v1::Device& d : header.devices()) {
    if (d.id() == device && !d.name().empty()) return absl::StrCat("GPU ", device, ": ", d.name());
  }
  return absl::StrCat("GPU ", device);
}

// ---- The export pass ---------------------------------------------------------------------------

// A slice track and its overflow lanes.
struct SliceTrack {
  uint64_t id = 0;
  uint64_t lane_parent = 0;  // parent of the overflow tracks
  std::string lane_prefix;   // "Stream 7" -> "Stream 7 (overlap 1)"
  int32_t order = 0;
  LaneAllocator lanes;
  int declared_lanes = 1;  // lane 0 is the track itself
};

struct GpuOp {
  uint64_t start;
  uint64_t end;
  uint64_t track;
  uint32_t index;
  uint8_t kind;           // 0 kernel, 1 memcpy, 2 memset
  bool replayed = false;  // a kernel replayed for metrics: tested once per kernel
};

struct ClosedRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t name = 0;
  uint32_t domain = 0;
  uint32_t thread = 0;
};

// Text for a kernel signature, made once.
struct SignatureText {
  bool ready = false;
  std::string name;           // the short base name (core::ShortKernelName)
  std::string replayed_name;  // "name [metrics replay]"
  std::string grid;
  std::string block;
  uint32_t grid_id = 0;  // dims_ ids: kernels of one shape share the interned text
  uint32_t block_id = 0;
};

struct FunctionText {
  bool ready = false;
  std::string name;  // display name, no _vNNNN
  bool driver = false;
};

// Slices handed over in end order (inner before outer, as CUPTI delivers records) nest on the
// fewest lanes.
template <typename T>
void SortByEnd(std::vector<T>* items) {
  auto before = [](const T& a, const T& b) { return a.end != b.end ? a.end < b.end : a.start > b.start; };
  if (!std::is_sorted(items->begin(), items->end(), before)) std::stable_sort(items->begin(), items->end(), before);
}

class ExportPass {
 public:
  ExportPass(const ScanResult& scan, const std::vector<analysis::Finding>& findings, EventSink* sink,
             Utilization utilization, ExportSummary* summary)
      : scan_(scan), findings_(findings), sink_(sink), utilization_(std::move(utilization)), summary_(summary) {}

  absl::Status Run(core::TraceReader& reader, const std::string& path);

 private:
  absl::Status DeclareTracks();
  absl::Status Declare(Track track);
  SliceTrack& AddSliceTrack(uint64_t id, uint64_t lane_parent, std::string lane_prefix, int32_t order);
  // The state of a declared slice track; null for one the scan did not see.
  SliceTrack* State(uint64_t id);
  // Places a slice on its track or an overflow lane; returns the track id to use, or 0 when the
  // slice fits no lane. Declares the lane track on first use.
  absl::StatusOr<uint64_t> Place(uint64_t track, uint64_t start, uint64_t end);
  absl::Status Emit(Slice slice);

  absl::Status ExportWindows();
  absl::Status ExportFindings();
  absl::Status ExportChunk(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportGpu(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  // `op` is the kernel's entry in ops_: its track, span and whether it was replayed.
  absl::Status ExportKernel(const core::KernelRow& k, const GpuOp& op, const core::Dictionary& dict);
  absl::Status ExportApi(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportNvtx(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportRange(const ClosedRange& range, const core::Dictionary& dict, bool unterminated);
  absl::Status ExportOverheads(const core::DecodedChunk& chunk, const core::Dictionary& dict);
  absl::Status ExportUtilization();

  const SignatureText& Signature(uint32_t id, const core::Dictionary& dict);
  const FunctionText& Function(uint32_t id, const core::Dictionary& dict);
  bool Replayed(const core::KernelRow& k) const { return scan_.Replayed(k); }
  // Where a kernel ran: its record's span; for a replayed launch whose record has no duration (CUPTI
  // gives the passes none), the METRICS window it starts, during which its passes ran serialized.
  std::pair<uint64_t, uint64_t> KernelSpan(const core::KernelRow& k, bool replayed) const;
  // The flow id that ends at a GPU operation: its correlation id when the call that issued it is in
  // the trace. The nodes of one graph launch share the launch's id; a flow has one end, so only the
  // first node written gets it.
  uint64_t FlowIn(uint64_t correlation, bool graph_node) {
    if (correlation == 0 || !scan_.api_correlations.Contains(correlation)) return 0;
    if (graph_node && !graph_flows_.insert(correlation).second) return 0;
    return correlation;
  }

  const ScanResult& scan_;
  const std::vector<analysis::Finding>& findings_;
  EventSink* sink_;
  Utilization utilization_;
  ExportSummary* summary_;

  absl::flat_hash_map<uint64_t, size_t> track_index_;
  std::deque<SliceTrack> tracks_;
  uint64_t last_track_id_ = 0;
  SliceTrack* last_track_ = nullptr;

  std::deque<SignatureText> signatures_;             // by signature id (a deque: references stay valid)
  std::deque<FunctionText> functions_;               // by function id
  absl::flat_hash_map<std::string, uint32_t> dims_;  // distinct launch dimension texts
  NvtxRangePairing nvtx_pairing_;
  absl::flat_hash_set<uint64_t> graph_flows_;                                // graph launches whose flow has its end

  // Scratch reused from chunk to chunk.
  std::vector<GpuOp> ops_;
  std::vector<uint32_t> order_;
  std::vector<ClosedRange> ranges_;
  std::vector<Arg> args_;
  absl::flat_hash_map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> busy_;
};

absl::Status ExportPass::Declare(Track track) {
  ++summary_->tracks;
  return sink_->AddTrack(track);
}

SliceTrack& ExportPass::AddSliceTrack(uint64_t id, uint64_t lane_parent, std::string lane_prefix, int32_t order) {
  track_index_[id] = tracks_.size();
  SliceTrack& t = tracks_.emplace_back();
  t.id = id;
  t.lane_parent = lane_parent;
  t.lane_prefix = std::move(lane_prefix);
  t.order = order;
  return t;
}

SliceTrack* ExportPass::State(uint64_t id) {
  if (last_track_ != nullptr && last_track_id_ == id) return last_track_;
  auto it = track_index_.find(id);
  if (it == track_index_.end()) return nullptr;
  last_track_ = &tracks_[it->second];
  last_track_id_ = id;
  return last_track_;
}

absl::Status ExportPass::DeclareTracks() {
  const v1::Header& header = scan_.header;
  // Host processes and their threads.
  std::vector<uint32_t> pids;
  for (const auto& [id, use] : scan_.threads) pids.push_back(use.pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  int32_t order = 0;
  for (uint32_t pid : pids) {
    Track p;
    p.id = TrackId(TrackKind::kProcess, pid);
    p.type = TrackType::kProcess;
    p.name = ProcessName(header, pid);
    p.pid = static_cast<int32_t>(pid);
    if (pid == header.session().pid())
      p.cmdline.assign(header.session().command_line().begin(), header.session().command_line().end());
    p.order = order++;
    if (auto st = Declare(std::move(p)); !st.ok()) return st;
  }
  for (const auto& [id, use] : scan_.threads) {
    const std::string tid = absl::StrCat(use.tid);
    Track t;
    t.id = TrackId(TrackKind::kThread, id);
    t.parent = TrackId(TrackKind::kProcess, use.pid);
    t.type = TrackType::kThread;
    t.pid = static_cast<int32_t>(use.pid);
    t.tid = static_cast<int64_t>(use.tid);
    t.order = static_cast<int32_t>(id);
    if (auto st = Declare(t); !st.ok()) return st;
    AddSliceTrack(t.id, t.id, absl::StrCat("CUDA API, thread ", tid), 0);
    if (use.nvtx) {
      Track n;
      n.id = TrackId(TrackKind::kNvtx, id);
      n.parent = t.id;
      n.type = TrackType::kSlices;
      n.name = absl::StrCat("NVTX, thread ", tid);
      n.order = 1;
      if (auto st = Declare(n); !st.ok()) return st;
      AddSliceTrack(n.id, t.id, n.name, n.order);
    }
    if (use.overhead) {
      Track o;
      o.id = TrackId(TrackKind::kOverhead, id);
      o.parent = t.id;
      o.type = TrackType::kSlices;
      o.name = absl::StrCat("CUPTI overhead, thread ", tid);
      o.order = 2;
      if (auto st = Declare(o); !st.ok()) return st;
      AddSliceTrack(o.id, t.id, o.name, o.order);
    }
  }
  // A group per device: its utilization, then its streams by id.
  for (uint32_t device : scan_.devices) {
    Track d;
    d.id = TrackId(TrackKind::kDevice, device);
    d.type = TrackType::kGroup;
    d.name = DeviceName(header, device);
    d.order = order++;
    if (auto st = Declare(d); !st.ok()) return st;
    Track u;
    u.id = TrackId(TrackKind::kUtilization, device);
    u.parent = d.id;
    u.type = TrackType::kCounter;
    u.name = absl::StrCat("GPU ", device, " utilization");
    u.unit = "%";
    u.order = 0;
    if (auto st = Declare(u); !st.ok()) return st;
    int32_t rank = 1;
    for (const auto& [dev, stream] : scan_.streams) {
      if (dev != device) continue;
      Track s;
      s.id = StreamTrackId(device, stream);
      s.parent = d.id;
      s.type = TrackType::kSlices;
      s.name = absl::StrCat("Stream ", stream);
      s.order = rank++;
      s.preferred_tid = stream;
      if (auto st = Declare(s); !st.ok()) return st;
      AddSliceTrack(s.id, d.id, s.name, s.order);
    }
  }
  if (!scan_.windows.empty()) {
    Track w;
    w.id = TrackId(TrackKind::kWindows, 0);
    w.type = TrackType::kSlices;
    w.name = "cuscope capture windows";
    w.order = order++;
    if (auto st = Declare(w); !st.ok()) return st;
    AddSliceTrack(w.id, 0, w.name, w.order);
  }
  bool any_spans = false;
  for (const analysis::Finding& f : findings_) any_spans |= !f.spans.empty();
  if (any_spans) {
    Track g;
    g.id = TrackId(TrackKind::kFindings, 0);
    g.type = TrackType::kGroup;
    g.name = "cuscope findings";
    g.order = order++;
    if (auto st = Declare(g); !st.ok()) return st;
    for (size_t i = 0; i < findings_.size(); ++i) {
      const analysis::Finding& f = findings_[i];
      if (f.spans.empty()) continue;
      Track t;
      t.id = TrackId(TrackKind::kFinding, i + 1);
      t.parent = g.id;
      t.type = TrackType::kSlices;
      t.name = absl::StrCat(i + 1, ". ", AV(analysis::SeverityName(f.severity)), ": ", f.headline);
      t.order = static_cast<int32_t>(i);
      if (auto st = Declare(t); !st.ok()) return st;
      AddSliceTrack(t.id, g.id, absl::StrCat(i + 1, ". ", f.rule_id), t.order);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ExportPass::Place(uint64_t track, uint64_t start, uint64_t end) {
  SliceTrack* state = State(track);
  const int lane = state != nullptr ? state->lanes.Place(start, end) : -1;
  if (lane < 0) {
    ++summary_->dropped_slices;
    return 0;
  }
  if (lane == 0) return track;
  SliceTrack& t = *state;
  ++summary_->overlap_slices;
  while (t.declared_lanes <= lane) {
    Track l;
    l.id = t.id + static_cast<uint64_t>(t.declared_lanes);
    l.parent = t.lane_parent;
    l.type = TrackType::kSlices;
    l.name = absl::StrCat(t.lane_prefix, " (overlap ", t.declared_lanes, ")");
    l.order = t.order;
    if (auto st = Declare(l); !st.ok()) return st;
    ++t.declared_lanes;
  }
  return t.id + static_cast<uint64_t>(lane);
}

absl::Status ExportPass::Emit(Slice slice) {
  absl::StatusOr<uint64_t> track = Place(slice.track, slice.start, slice.end);
  if (!track.ok()) return track.status();
  if (*track == 0) return absl::OkStatus();
  slice.track = *track;
  return sink_->AddSlice(slice);
}

const SignatureText& ExportPass::Signature(uint32_t id, const core::Dictionary& dict) {
  if (signatures_.size() <= id) signatures_.resize(id + 1);
  SignatureText& s = signatures_[id];
  if (!s.ready) {
    const v1::KernelSignature& sig = dict.signature(id);
    // Short, as in every other view; the slice's "mangled" argument keeps the name as recorded.
    s.name = core::ShortKernelName(dict.str(sig.name()));
    s.replayed_name = absl::StrCat(s.name, " [metrics replay]");
    s.grid = absl::StrFormat("(%d, %d, %d)", sig.grid_x(), sig.grid_y(), sig.grid_z());
    s.block = absl::StrFormat("(%d, %d, %d)", sig.block_x(), sig.block_y(), sig.block_z());
    s.grid_id = dims_.try_emplace(s.grid, static_cast<uint32_t>(dims_.size())).first->second;
    s.block_id = dims_.try_emplace(s.block, static_cast<uint32_t>(dims_.size())).first->second;
    s.ready = true;
  }
  return s;
}

const FunctionText& ExportPass::Function(uint32_t id, const core::Dictionary& dict) {
  if (functions_.size() <= id) functions_.resize(id + 1);
  FunctionText& f = functions_[id];
  if (!f.ready) {
    f.name = std::string(core::DisplayApiName(dict.function_name(id)));
    f.driver = dict.function(id).domain() == v1::API_DOMAIN_DRIVER;
    f.ready = true;
  }
  return f;
}

absl::Status ExportPass::ExportWindows() {
  // A window arrives whole, or as an opening half and a later closing half of the same kind.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  std::vector<const v1::CaptureWindow*> sources;
  std::array<std::vector<const v1::CaptureWindow*>, 3> open;
  struct Done {
    uint64_t start, end;
    const v1::CaptureWindow* window;
    bool unterminated;
  };
  std::vector<Done> done;
  for (const v1::CaptureWindow& w : scan_.windows) {
    const size_t kind = static_cast<size_t>(w.kind()) < open.size() ? static_cast<size_t>(w.kind()) : 0;
    if (w.start_ns() != 0 && w.end_ns() != 0) {
      done.push_back({w.start_ns(), std::max(w.start_ns(), w.end_ns()), &w, false});
    } else if (w.start_ns() != 0) {
      open[kind].push_back(&w);
    } else if (w.end_ns() != 0 && !open[kind].empty()) {
      const v1::CaptureWindow* o = open[kind].back();
      open[kind].pop_back();
      done.push_back({o->start_ns(), std::max(o->start_ns(), w.end_ns()), o, false});
    }
  }
  for (const auto& kind : open) {
    for (const v1::CaptureWindow* o : kind) {
      done.push_back({o->start_ns(), std::max(o->start_ns(), scan_.last_ns), o, true});
    }
  }
  SortByEnd(&done);
  const uint64_t track = TrackId(TrackKind::kWindows, 0);
  for (const Done& d : done) {
    const bool metrics = d.window->kind() == v1::WINDOW_KIND_METRICS;
    args_.clear();
    args_.push_back(Arg::String(F(Fixed::kArgReason), Name{0, d.window->reason()}));
    if (d.unterminated) args_.push_back(Arg::Bool(F(Fixed::kArgUnterminated), true));
    Slice s;
    s.track = track;
    s.start = d.start;
    s.end = d.end;
    s.name = F(metrics ? Fixed::kNameMetricsWindow : Fixed::kNameTimelineWindow);
    s.category = F(metrics ? Fixed::kCatMetricsWindow : Fixed::kCatTimelineWindow);
    s.args = args_;
    if (auto st = Emit(s); !st.ok()) return st;
    ++summary_->windows;
  }
  return absl::OkStatus();
}

absl::Status ExportPass::ExportFindings() {
  struct Mark {
    uint64_t start, end;
    const analysis::Span* span;
  };
  std::vector<Mark> marks;
  summary_->findings_total = findings_.size();
  for (size_t i = 0; i < findings_.size(); ++i) {
    const analysis::Finding& f = findings_[i];
    if (f.spans.empty()) continue;
    ++summary_->findings;
    marks.clear();
    for (const analysis::Span& span : f.spans) marks.push_back({span.begin, std::max(span.begin, span.end), &span});
    SortByEnd(&marks);
    const uint64_t track = TrackId(TrackKind::kFinding, i + 1);
    for (const Mark& m : marks) {
      args_.clear();
      args_.push_back(Arg::Uint(F(Fixed::kArgRank), i + 1));
      args_.push_back(Arg::String(F(Fixed::kArgRule), Name{0, f.rule_id}));
      args_.push_back(Arg::String(F(Fixed::kArgSeverity), Name{0, analysis::SeverityName(f.severity)}));
      args_.push_back(Arg::String(F(Fixed::kArgHeadline), Name{0, f.headline}));
      if (!f.recommendation.empty()) {
        args_.push_back(Arg::String(F(Fixed::kArgRecommendation), Name{0, f.recommendation}));
      }
      args_.push_back(Arg::Uint(F(Fixed::kArgRecoverable), f.recoverable_ns));
      Slice s;
      s.track = track;
      s.start = m.start;
      s.end = m.end;
      s.name = Name{0, m.span->label.empty() ? std::string_view(f.rule_id) : std::string_view(m.span->label)};
      s.category = F(Fixed::kCatFinding);
      s.args = args_;
      if (auto st = Emit(s); !st.ok()) return st;
      ++summary_->finding_spans;
    }
  }
  return absl::OkStatus();
}

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

absl::Status ExportPass::ExportUtilization() {
  for (uint32_t device : scan_.devices) {
    const uint64_t track = TrackId(TrackKind::kUtilization, device);
    for (const Utilization::Sample& sample : utilization_.Samples(device)) {
      if (auto st = sink_->AddCounter(track, sample.time, sample.percent); !st.ok()) return st;
      ++summary_->counter_samples;
    }
  }
  return absl::OkStatus();
}

absl::Status ExportPass::ExportChunk(const core::DecodedChunk& chunk, const core::Dictionary& dict) {
  if (auto st = ExportGpu(chunk, dict); !st.ok()) return st;
  if (auto st = ExportApi(chunk, dict); !st.ok()) return st;
  if (auto st = ExportNvtx(chunk, dict); !st.ok()) return st;
  return ExportOverheads(chunk, dict);
}

absl::Status ExportPass::Run(core::TraceReader& reader, const std::string& path) {
  ExportInfo info;
  info.first_ns = scan_.empty() ? 0 : scan_.first_ns;
  info.last_ns = scan_.empty() ? 0 : scan_.last_ns;
  const uint64_t session_start = scan_.header.session().start_time_ns();
  info.time_origin_ns = session_start != 0 ? session_start : info.first_ns;
  info.source_path = path;
  if (auto st = sink_->Start(info); !st.ok()) return st;
  if (auto st = DeclareTracks(); !st.ok()) return st;
  if (auto st = ExportWindows(); !st.ok()) return st;
  if (auto st = ExportFindings(); !st.ok()) return st;

  core::DecodedChunk chunk;
  // Only the chunks the scan saw: a trace still being written may have grown since, with tracks
  // not declared. A damaged block stops both passes at the same place (the scan's warning says so).
  while (summary_->chunks < scan_.chunks) {
    absl::StatusOr<bool> more = reader.Next(&chunk);
    if (!more.ok() || !*more) break;
    ++summary_->chunks;
    if (auto st = ExportChunk(chunk, reader.dictionary()); !st.ok()) return st;
  }

  // Ranges still open at the end of the trace lasted at least until then.
  if (nvtx_pairing_.unclosed() > 0) {
    ranges_.clear();
    for (const core::NvtxRow& o : nvtx_pairing_.Unclosed()) {
      ranges_.push_back({o.time, std::max(o.time, scan_.last_ns), o.name, o.domain, o.thread});
    }
    SortByEnd(&ranges_);
    for (const ClosedRange& r : ranges_) {
      if (auto st = ExportRange(r, reader.dictionary(), true); !st.ok()) return st;
    }
    summary_->warnings.push_back(
        absl::StrCat(nvtx_pairing_.unclosed(), " NVTX range(s) never closed: drawn to the end of the trace"));
  }
  if (summary_->dropped_slices > 0) {
    summary_->warnings.push_back(absl::StrCat(summary_->dropped_slices, " slice(s) overlapped more than ",
                                              LaneAllocator::kMaxLanes, " others on their track and were left out"));
  }
  if (auto st = ExportUtilization(); !st.ok()) return st;
  return sink_->Finish();
}

}  // namespace

std::optional<ExportFormat> ParseExportFormat(std::string_view name) {
  if (name == "perfetto") return ExportFormat::kPerfetto;
  if (name == "chrome-json") return ExportFormat::kChromeJson;
  return std::nullopt;
}

std::string_view ExportFormatName(ExportFormat format) {
  return format == ExportFormat::kPerfetto ? "perfetto" : "chrome-json";
}

absl::StatusOr<ExportSummary> ExportTrace(const std::string& trace_path, const ExportOptions& options,
                                          EventSink* sink) {
  std::vector<analysis::Finding> findings;
  // The scan opens the file first: a file that is not a trace fails here, before the analysis.
  absl::StatusOr<std::unique_ptr<core::TraceReader>> scan_reader = core::TraceReader::Open(trace_path);
  if (!scan_reader.ok()) return scan_reader.status();
  if (options.findings) {
    absl::StatusOr<std::vector<analysis::Finding>> found = RunFindingsPass(trace_path);
    if (!found.ok()) return found.status();
    findings = *std::move(found);
  }
  ScanResult scan = Scan(**scan_reader, options.add_source_lines);
  scan_reader->reset();
  if (scan.stuck_vote.HasCandidate()) {
    absl::StatusOr<std::unique_ptr<core::TraceReader>> again = core::TraceReader::Open(trace_path);
    if (!again.ok()) return again.status();
    ConfirmStuckCorrelation(**again, &scan);
  }

  ExportSummary summary;
  summary.tail_bytes_dropped = scan.tail_bytes_dropped;
  if (scan.corruption) {
    summary.warnings.push_back(
        absl::StrCat(scan.corruption->message(), "; exported the ", scan.chunks, " chunk(s) before it"));
  }
  if (scan.tail_bytes_dropped > 0) {
    summary.warnings.push_back(absl::StrCat("the trace ends in an incomplete block (", scan.tail_bytes_dropped,
                                            " bytes at the end dropped); exported the ", scan.chunks,
                                            " complete chunk(s)"));
  }
  absl::StatusOr<Utilization> utilization =
      Utilization::Create(scan.empty() ? 0 : scan.first_ns, scan.empty() ? 0 : scan.last_ns, options.bucket_ns);
  if (!utilization.ok()) return utilization.status();
  summary.bucket_ns = utilization->bucket_ns();

  absl::StatusOr<std::unique_ptr<core::TraceReader>> reader = core::TraceReader::Open(trace_path);
  if (!reader.ok()) return reader.status();
  ExportPass pass(scan, findings, sink, *std::move(utilization), &summary);
  if (auto st = pass.Run(**reader, trace_path); !st.ok()) return st;
  return summary;
}

absl::StatusOr<ExportSummary> ExportToFile(const std::string& trace_path, const std::string& output_path,
                                           const ExportOptions& options) {
  // Open the input first: a missing or foreign input is reported before an output is created.
  {
    absl::StatusOr<std::unique_ptr<core::TraceReader>> probe = core::TraceReader::Open(trace_path);
    if (!probe.ok()) return probe.status();
  }
  struct stat in {}, out {};
  if (::stat(trace_path.c_str(), &in) != 0) return absl::NotFoundError(absl::StrCat("cannot read ", trace_path));
  if (::stat(output_path.c_str(), &out) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
    return absl::InvalidArgumentError(absl::StrCat("the output ", output_path, " is the input trace"));
  }
  absl::StatusOr<std::unique_ptr<core::OutputFile>> file = core::OutputFile::Create(output_path, options.overwrite);
  if (!file.ok()) return file.status();
  const uint64_t trace_bytes = static_cast<uint64_t>(in.st_size);
  (*file)->SetByteLimit(core::TraceOutputBound(trace_bytes), absl::StrCat("the export to ", output_path),
                        core::TraceOutputBoundReason(trace_bytes));
  std::unique_ptr<EventSink> writer;
  if (options.format == ExportFormat::kPerfetto) {
    writer = std::make_unique<PerfettoWriter>(file->get());
  } else {
    writer = std::make_unique<ChromeJsonWriter>(file->get());
  }
  absl::StatusOr<ExportSummary> summary = ExportTrace(trace_path, options, writer.get());
  if (summary.ok()) {
    summary->bytes_written = (*file)->bytes();
    if (absl::Status st = (*file)->Close(); !st.ok()) summary = st;
  }
  if (!summary.ok()) (*file)->Discard();
  return summary;
}

}  // namespace cuscope::exporter
