#include "lib/export/rank_export.h"

#include <sys/stat.h>

#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "lib/core/output_file.h"
#include "lib/core/trace_reader.h"
#include "lib/export/chrome_json_writer.h"
#include "lib/export/export_names.h"
#include "lib/export/perfetto_writer.h"
#include "lib/ranks/clock_alignment.h"
#include "lib/ranks/rank_summary.h"

namespace cuscope::exporter {
namespace {

// One trace's events into the shared writer: its own Start and Finish are swallowed (the writer
// starts once, before the first trace, and finishes after the last).
class RankSink final : public EventSink {
 public:
  RankSink(EventSink* out, int index, std::string label, ranks::ClockAlignment clock,
           absl::flat_hash_set<int32_t>* pids_taken)
      : out_(out), salt_(static_cast<uint64_t>(index + 1)), label_(std::move(label)), clock_(std::move(clock)),
        pids_taken_(pids_taken) {}

  absl::Status Start(const ExportInfo&) override { return absl::OkStatus(); }
  absl::Status Finish() override { return absl::OkStatus(); }

  absl::Status AddTrack(const Track& track) override {
    Track t = track;
    t.id = TrackOf(track.id);
    if (track.parent != 0) t.parent = TrackOf(track.parent);
    if (track.parent == 0) {
      t.name = absl::StrCat(label_, " \xc2\xb7 ", track.name);
      t.order = static_cast<int32_t>(salt_ * 1000) + track.order;
    }
    if (track.type == TrackType::kProcess || track.type == TrackType::kThread) t.pid = Pid(track.pid);
    return out_->AddTrack(t);
  }
  absl::Status AddSlice(const Slice& slice) override {
    Slice s = slice;
    s.track = TrackOf(slice.track);
    s.start = clock_.ToWall(slice.start);
    s.end = std::max(s.start, clock_.ToWall(slice.end));
    s.name = Salted(slice.name);
    s.category = Salted(slice.category);
    args_.assign(slice.args.begin(), slice.args.end());
    for (Arg& a : args_) Salt(a);
    s.args = args_;
    if (slice.flow_out != 0) s.flow_out = FlowOf(slice.flow_out);
    if (slice.flow_in != 0) s.flow_in = FlowOf(slice.flow_in);
    return out_->AddSlice(s);
  }
  absl::Status AddInstant(const Instant& instant) override {
    Instant i = instant;
    i.track = TrackOf(instant.track);
    i.time = clock_.ToWall(instant.time);
    i.name = Salted(instant.name);
    i.category = Salted(instant.category);
    args_.assign(instant.args.begin(), instant.args.end());
    for (Arg& a : args_) Salt(a);
    i.args = args_;
    return out_->AddInstant(i);
  }
  absl::Status AddCounter(uint64_t track, uint64_t time, double value) override {
    return out_->AddCounter(TrackOf(track), clock_.ToWall(time), value);
  }

 private:
  // Track ids of different traces never meet: each trace's get new ones, in the order declared.
  uint64_t TrackOf(uint64_t id) {
    auto [it, added] = tracks_.try_emplace(id, 0);
    if (added) it->second = (salt_ << 48) | tracks_.size();
    return it->second;
  }
  uint64_t FlowOf(uint64_t id) const { return id ^ (salt_ << 48); }
  int32_t Pid(int32_t pid) {
    auto [it, added] = pids_.try_emplace(pid, pid);
    if (added && !pids_taken_->insert(pid).second) {
      // Another trace (another host) has this process id: one of its own, above any Linux pid (at
      // most 2^22) and below 2^30, whatever pid the trace claims.
      constexpr uint32_t kBase = 1u << 22, kSpan = (1u << 30) - kBase;
      uint32_t synthetic = static_cast<uint32_t>(pid) % kSpan;
      while (!pids_taken_->insert(static_cast<int32_t>(kBase + synthetic)).second) synthetic = (synthetic + 1) % kSpan;
      it->second = static_cast<int32_t>(kBase + synthetic);
    }
    return it->second;
  }
  // Interning keys of what the trace's dictionary names are this trace's; fixed strings are shared.
  Name Salted(Name n) const {
    const auto kind = static_cast<NameKind>(n.key >> 56);
    if (n.key != 0 && kind != NameKind::kFixed && kind != NameKind::kCopy && kind != NameKind::kMemoryKind) {
      n.key |= salt_ << 40;
    }
    return n;
  }
  void Salt(Arg& a) const {
    a.name = Salted(a.name);
    if (a.type == Arg::Type::kString) a.s = Salted(a.s);
  }

  EventSink* out_;
  const uint64_t salt_;
  const std::string label_;
  const ranks::ClockAlignment clock_;
  absl::flat_hash_set<int32_t>* pids_taken_;
  absl::flat_hash_map<uint64_t, uint64_t> tracks_;
  absl::flat_hash_map<int32_t, int32_t> pids_;
  std::vector<Arg> args_;
};

// The trace's clock references: the header's and the chunks'.
absl::StatusOr<std::pair<v1::Header, ranks::ClockAlignment>> ReadClocks(const std::string& path) {
  absl::StatusOr<std::unique_ptr<core::TraceReader>> reader = core::TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  std::vector<v1::ClockReference> references;
  core::DecodedChunk chunk;
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->Next(&chunk);
    if (!more.ok() || !*more) break;
    if (chunk.clock_reference) references.push_back(*chunk.clock_reference);
  }
  const v1::Header header = (*reader)->header();
  return std::make_pair(header, ranks::ClockAlignment::FromTrace(header, references));
}

}  // namespace

absl::StatusOr<ExportSummary> ExportRanksToFile(const std::vector<std::string>& trace_paths,
                                                const std::string& output_path, const ExportOptions& options) {
  std::vector<std::pair<v1::Header, ranks::ClockAlignment>> clocks;
  uint64_t input_bytes = 0;
  uint64_t first_ns = UINT64_MAX;
  for (const std::string& path : trace_paths) {
    absl::StatusOr<std::pair<v1::Header, ranks::ClockAlignment>> c = ReadClocks(path);
    if (!c.ok()) return c.status();
    first_ns = std::min(first_ns, c->second.ToWall(c->first.session().start_time_ns()));
    clocks.push_back(*std::move(c));
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) input_bytes += static_cast<uint64_t>(st.st_size);
    struct stat out {};
    if (::stat(output_path.c_str(), &out) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino) {
      return absl::InvalidArgumentError(absl::StrCat("the output ", output_path, " is the input trace ", path));
    }
  }
  absl::StatusOr<std::unique_ptr<core::OutputFile>> file = core::OutputFile::Create(output_path, options.overwrite);
  if (!file.ok()) return file.status();
  (*file)->SetByteLimit(core::TraceOutputBound(input_bytes), absl::StrCat("the export to ", output_path),
                        core::TraceOutputBoundReason(input_bytes));
  std::unique_ptr<EventSink> writer;
  if (options.format == ExportFormat::kPerfetto) {
    writer = std::make_unique<PerfettoWriter>(file->get());
  } else {
    writer = std::make_unique<ChromeJsonWriter>(file->get());
  }
  ExportSummary total;
  ExportInfo info;
  info.first_ns = first_ns == UINT64_MAX ? 0 : first_ns;
  info.time_origin_ns = info.first_ns;
  info.source_path = absl::StrCat(trace_paths.size(), " rank traces");
  absl::Status st = writer->Start(info);
  absl::flat_hash_set<int32_t> pids_taken;
  for (size_t i = 0; st.ok() && i < trace_paths.size(); ++i) {
    // Named as analyze names it.
    const std::string label = ranks::IdentityOf(clocks[i].first.session(), trace_paths[i], static_cast<int>(i)).Label();
    RankSink sink(writer.get(), static_cast<int>(i), label, clocks[i].second, &pids_taken);
    absl::StatusOr<ExportSummary> one = ExportTrace(trace_paths[i], options, &sink);
    if (!one.ok()) {
      st = one.status();
      break;
    }
    total.chunks += one->chunks;
    total.kernels += one->kernels;
    total.api_calls += one->api_calls;
    total.memcpys += one->memcpys;
    total.memsets += one->memsets;
    total.nvtx_ranges += one->nvtx_ranges;
    total.nvtx_marks += one->nvtx_marks;
    total.flows += one->flows;
    total.findings += one->findings;
    total.findings_total += one->findings_total;
    total.tracks += one->tracks;
    for (const std::string& w : one->warnings) total.warnings.push_back(absl::StrCat(trace_paths[i], ": ", w));
  }
  if (st.ok()) st = writer->Finish();
  if (st.ok()) {
    total.bytes_written = (*file)->bytes();
    st = (*file)->Close();
  }
  if (!st.ok()) {
    (*file)->Discard();
    return st;
  }
  return total;
}

}  // namespace cuscope::exporter
