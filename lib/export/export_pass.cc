#include "lib/export/export_pass.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/core/api_names.h"
#include "lib/core/kernel_names.h"
#include "lib/core/kernel_selection.h"
#include "lib/export/export_names.h"

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

}  // namespace

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

}  // namespace cuscope::exporter
