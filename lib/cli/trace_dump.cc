#include "lib/cli/trace_dump.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/launch_sites.h"
#include "lib/process/call_stack.h"
#include "lib/core/terminal_text.h"
#include "lib/core/utf8.h"

namespace cuscope::cli {
namespace {

// A string from the trace as printed: cut at kMaxDumpNameBytes, then escaped (a name must not
// drive the terminal).
std::string E(std::string_view s) {
  if (s.size() <= kMaxDumpNameBytes) return core::EscapeForTerminal(s);
  std::string out = core::EscapeForTerminal(core::Utf8Prefix(s, kMaxDumpNameBytes));
  absl::StrAppend(&out, "... (", s.size(), " bytes)");
  return out;
}

// Writes lines while they fit the bound.
class BoundedLines {
 public:
  BoundedLines(std::FILE* out, uint64_t bound) : out_(out), bound_(bound) {}
  // False (and nothing written) once `line` would pass the bound.
  bool Put(const std::string& line) {
    if (over_ || line.size() > bound_ - bytes_) {
      over_ = true;
      return false;
    }
    std::fwrite(line.data(), 1, line.size(), out_);
    bytes_ += line.size();
    return true;
  }
  bool over() const { return over_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::FILE* out_;
  const uint64_t bound_;
  uint64_t bytes_ = 0;
  bool over_ = false;
};

std::string HeaderText(const v1::Header& h) {
  const auto& s = h.session();
  std::vector<std::string> command_line;
  for (const std::string& arg : s.command_line()) command_line.push_back(E(arg));
  std::string out = absl::StrFormat("trace format %u, cuscope %s, entry %s\n", h.format_version(),
                                    E(s.library_version()), E(s.entry()));
  absl::StrAppendFormat(&out, "process %u on %s: %s\n", s.pid(), E(s.host()), E(absl::StrJoin(command_line, " ")));
  absl::StrAppendFormat(&out, "CUPTI %u, driver %u, runtime %u, rank %d/%d (local %d)", s.cupti_version(),
                        s.driver_version(), s.runtime_version(), s.rank(), s.world_size(), s.local_rank());
  if (!s.launcher().empty()) absl::StrAppend(&out, ", ", E(s.launcher()));
  if (!s.job_id().empty()) absl::StrAppend(&out, " job ", E(s.job_id()));
  out.push_back('\n');
  if (s.clock_ref_realtime_ns() != 0) {
    absl::StrAppendFormat(&out, "clocks: CUPTI %u ns = wall clock %u ns; boot %s\n", s.clock_ref_cupti_ns(),
                          s.clock_ref_realtime_ns(), E(s.boot_id()));
  }
  absl::StrAppendFormat(&out, "activity kinds: %s; buffers %" PRIu64 " B, cap %" PRIu64 " B, flush %u ms\n",
                        E(absl::StrJoin(h.config().activity_kinds(), ",")), h.config().buffer_bytes(),
                        h.config().buffer_pool_cap_bytes(), h.config().flush_period_ms());
  for (const auto& d : h.devices()) {
    absl::StrAppendFormat(&out, "device %u: %s, cc %u.%u, %u SMs, %u warps/SM, peak DRAM %.0f GB/s\n", d.id(),
                          E(d.name()), d.compute_capability_major(), d.compute_capability_minor(), d.sm_count(),
                          d.max_warps_per_sm(), d.peak_dram_bytes_per_second() / 1e9);
  }
  return out;
}

// A payload's value as its kind reads; an extended payload shows its schema and first bytes, which
// is as far as a dump can go without the schema itself.
std::string PayloadValue(const core::NvtxPayloadRecord& p) {
  std::string value;
  switch (p.kind) {
    case v1::NVTX_PAYLOAD_KIND_UINT64: value = absl::StrCat("uint64 ", p.bits); break;
    case v1::NVTX_PAYLOAD_KIND_INT64: value = absl::StrCat("int64 ", static_cast<int64_t>(p.bits)); break;
    case v1::NVTX_PAYLOAD_KIND_DOUBLE: {
      double d = 0;
      std::memcpy(&d, &p.bits, sizeof(d));
      value = absl::StrCat("double ", d);
      break;
    }
    case v1::NVTX_PAYLOAD_KIND_EXTENDED: {
      value = absl::StrFormat("schema 0x%x, %u bytes:", p.schema_id, p.data.size());
      for (size_t i = 0; i < std::min<size_t>(p.data.size(), 64); ++i) {
        absl::StrAppendFormat(&value, "%s%02x", i % 8 == 0 ? " " : "", static_cast<unsigned char>(p.data[i]));
      }
      if (p.data.size() > 64) value.append(" ...");
      break;
    }
    default: value = "unknown"; break;
  }
  return value;
}

// The record lines of one chunk, as long as `limit` and the bound allow.
class ChunkPrinter {
 public:
  ChunkPrinter(const core::Dictionary& d, uint64_t origin, BoundedLines& out, uint64_t limit, uint64_t& printed,
               absl::flat_hash_set<uint32_t>& stacks_shown)
      : d_(d), origin_(origin), out_(out), limit_(limit), printed_(printed), stacks_shown_(stacks_shown) {}

  void Print(const core::DecodedChunk& c);

 private:
  bool PrintActivity(const core::DecodedChunk& c);
  bool PrintAnnotations(const core::DecodedChunk& c);
  bool PrintStacks(const core::DecodedChunk& c);
  bool PrintSamples(const core::DecodedChunk& c);
  void PrintNotes(const core::DecodedChunk& c);
  // Whether a record's line may be printed (counts it).
  bool Take() { return !out_.over() && printed_++ < limit_; }
  std::string Rel(uint64_t t) const { return RelativeMicroseconds(t, origin_); }
  // A stack's frames, innermost first, the first time it is printed; "(as above)" after that.
  std::string Frames(uint32_t stack);

  const core::Dictionary& d_;
  const uint64_t origin_;
  BoundedLines& out_;
  const uint64_t limit_;
  uint64_t& printed_;
  absl::flat_hash_set<uint32_t>& stacks_shown_;
};

std::string ChunkPrinter::Frames(uint32_t stack) {
  if (!d_.has_stack(stack)) return "";
  if (!stacks_shown_.insert(stack).second) return "(frames as above)";
  const auto& frames = d_.stack(stack).frames();
  std::string out;
  int shown = 0;
  for (uint32_t f : frames) {
    if (shown == static_cast<int>(process::kMaxCallStackFrames)) {
      absl::StrAppend(&out, " <- ... (", frames.size() - shown, " more frames)");
      break;
    }
    absl::StrAppend(&out, out.empty() ? "" : " <- ", E(analysis::FrameText(d_, f)));
    ++shown;
  }
  return out;
}

// Device activity and the API calls that caused it. Each section below returns false once a record
// is refused (the limit or the bound): nothing after it in the chunk is printed.
bool ChunkPrinter::PrintActivity(const core::DecodedChunk& c) {
  for (const auto& k : c.kernels) {
    if (!Take()) return false;
    const auto& s = d_.signature(k.signature);
    // queued_lead: how long before its start the host queued the launch (latency timestamps).
    out_.Put(absl::StrFormat(
        "kernel   %s dur=%" PRIu64 "ns dev=%u ctx=%u stream=%u corr=%" PRIu64
        " grid=(%d,%d,%d) block=(%d,%d,%d) regs=%u smem=%d+%d%s%s%s %s\n",
        Rel(k.start), k.end - k.start, s.device(), s.context(), k.stream, k.correlation_id, s.grid_x(), s.grid_y(),
        s.grid_z(), s.block_x(), s.block_y(), s.block_z(), s.registers_per_thread(), s.static_shared_memory(),
        s.dynamic_shared_memory(), k.graph_id ? absl::StrCat(" graph=", k.graph_id, "/", k.graph_node_id) : "",
        k.queued != 0 ? absl::StrCat(" queued_lead=", static_cast<int64_t>(k.start - k.queued), "ns") : "",
        k.replayed() ? " replayed" : "", E(d_.str(s.name()))));
  }
  for (const auto& a : c.api_calls) {
    if (!Take()) return false;
    const auto& f = d_.function(a.function);
    out_.Put(absl::StrFormat("api      %s dur=%" PRIu64 "ns %s tid=%" PRIu64 " corr=%" PRIu64 " rc=%u %s\n",
                             Rel(a.start), a.end - a.start, f.domain() == v1::API_DOMAIN_DRIVER ? "driver" : "runtime",
                             d_.thread(a.thread).tid(), a.correlation_id, a.return_code, E(d_.str(f.name()))));
  }
  for (const auto& m : c.memcpys) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("memcpy   %s dur=%" PRIu64 "ns %s %s->%s bytes=%" PRIu64 " stream=%u corr=%" PRIu64 "%s\n",
                             Rel(m.start), m.end - m.start, v1::CopyKind_Name(m.copy_kind),
                             v1::MemoryKind_Name(m.src_kind), v1::MemoryKind_Name(m.dst_kind), m.bytes, m.stream,
                             m.correlation_id, m.async ? " async" : ""));
  }
  for (const auto& m : c.memsets) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("memset   %s dur=%" PRIu64 "ns bytes=%" PRIu64 " %s stream=%u corr=%" PRIu64 "%s\n",
                             Rel(m.start), m.end - m.start, m.bytes, v1::MemoryKind_Name(m.memory_kind), m.stream,
                             m.correlation_id, m.async ? " async" : ""));
  }
  for (const auto& s : c.syncs) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("sync     %s dur=%" PRIu64 "ns %s stream=%d event=%u corr=%" PRIu64 "\n", Rel(s.start),
                             s.end - s.start, v1::SyncType_Name(s.type), static_cast<int>(s.stream), s.event,
                             s.correlation_id));
  }
  return true;
}

bool ChunkPrinter::PrintAnnotations(const core::DecodedChunk& c) {
  for (const auto& n : c.nvtx) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("nvtx     %s %s id=%" PRIu64 " tid=%" PRIu64 " %s%s%s\n", Rel(n.time),
                             v1::NvtxKind_Name(n.kind), n.id, d_.thread(n.thread).tid(), E(d_.str(n.domain)),
                             n.domain ? ":" : "", E(d_.str(n.name))));
  }
  for (const auto& p : c.nvtx_payloads) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("payload  id=%u %s\n", p.id, PayloadValue(p)));
  }
  for (const auto& m : c.memory_ops) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("memory   %s %s %s bytes=%" PRIu64 " addr=0x%" PRIx64 " stream=%u corr=%" PRIu64 "\n",
                             Rel(m.time), v1::MemoryOperationType_Name(m.type), v1::MemoryKind_Name(m.memory_kind),
                             m.bytes, m.address, m.stream, m.correlation_id));
  }
  for (const auto& o : c.overheads) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("overhead %s dur=%" PRIu64 "ns %s tid=%" PRIu64 "\n", Rel(o.start), o.end - o.start,
                             E(d_.str(o.kind)), d_.thread(o.thread).tid()));
  }
  for (const auto& m : c.metrics) {
    if (!Take()) return false;
    std::string line = absl::StrFormat("metrics  corr=%" PRIu64 " passes=%u grid=%u,%u,%u block=%u,%u,%u %s:",
                                       m.correlation_id, m.pass_count, m.grid[0], m.grid[1], m.grid[2], m.block[0],
                                       m.block[1], m.block[2], E(d_.str(m.kernel_name)));
    for (const auto& [name, value] : m.values) absl::StrAppendFormat(&line, " %s=%g", E(d_.str(name)), value);
    line.push_back('\n');
    out_.Put(line);
  }
  return true;
}

bool ChunkPrinter::PrintStacks(const core::DecodedChunk& c) {
  for (const auto& l : c.launch_stacks) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("stack    corr=%" PRIu64 " id=%u %s\n", l.correlation_id, l.stack, Frames(l.stack)));
  }
  for (const auto& g : c.graph_nodes) {
    if (!Take()) return false;
    if (g.stack != 0) {
      out_.Put(absl::StrFormat("graphnode node=%" PRIu64 " created %s thread=%u stack=%u %s\n", g.node_id,
                               Rel(g.created_ns), g.thread, g.stack, Frames(g.stack)));
    } else {
      out_.Put(absl::StrFormat("graphnode node=%" PRIu64 " cloned from node=%" PRIu64 "\n", g.node_id,
                               g.original_node_id));
    }
  }
  return true;
}

// The chunk's top-down choice is not counted against the limit: it is no record of the run.
bool ChunkPrinter::PrintSamples(const core::DecodedChunk& c) {
  for (const auto& cs : c.counter_samples) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("counter  %s dur=%" PRIu64 "ns dev=%u %s %s=%g\n", Rel(cs.start), cs.end - cs.start,
                             cs.device, cs.source == v1::COUNTER_SOURCE_NVML ? "nvml" : "pm", E(d_.str(cs.name)),
                             cs.value));
  }
  if (c.top_down) {
    out_.Put(absl::StrFormat("top-down %s window kernel time %" PRIu64 "ns, chosen:\n", Rel(c.top_down->time_ns()),
                             c.top_down->window_kernel_ns()));
    for (const auto& k : c.top_down->kernels()) {
      out_.Put(absl::StrFormat("hot      total=%" PRIu64 "ns launches=%" PRIu64 " dev=%u grid=%u,%u,%u block=%u,%u,%u %s\n",
                               k.total_ns(), k.launches(), k.device(), k.grid_x(), k.grid_y(), k.grid_z(), k.block_x(),
                               k.block_y(), k.block_z(), E(d_.str(k.name()))));
    }
  }
  for (const auto& m : c.monitor_intervals) {
    if (!Take()) return false;
    out_.Put(absl::StrFormat("monitor  %s .. %s launch_calls=%" PRIu64 " sync_calls=%" PRIu64 " sync_wait=%" PRIu64
                             "ns dropped=%" PRIu64 " late=%" PRIu64 "\n",
                             Rel(m.start_ns()), Rel(m.end_ns()), m.launch_calls(), m.sync_calls(), m.sync_wait_ns(),
                             m.records_dropped_by_cupti(), m.late_records()));
    for (const auto& dev : m.devices()) {
      out_.Put(absl::StrFormat("  device %u busy=%" PRIu64 "ns idle=%" PRIu64 "ns kernels=%" PRIu64
                               " kernel_time=%" PRIu64 "ns copies=%d memsets=%" PRIu64 "\n",
                               dev.device(), dev.busy_ns(), dev.idle_ns(), dev.kernels(), dev.kernel_gpu_ns(),
                               dev.copies_size(), dev.memsets()));
    }
  }
  return true;
}

// Windows and the session's statistics describe the capture rather than record the run: they are
// not counted against the limit, only the bound holds them back.
void ChunkPrinter::PrintNotes(const core::DecodedChunk& c) {
  for (const auto& w : c.windows) {
    std::string when;
    if (w.start_ns() != 0 && w.end_ns() != 0) {
      when = absl::StrCat("spans ", Rel(w.start_ns()), " .. ", Rel(w.end_ns()));
    } else if (w.start_ns() != 0) {
      when = absl::StrCat("opens ", Rel(w.start_ns()));
    } else {
      when = absl::StrCat("closes ", Rel(w.end_ns()));
    }
    out_.Put(absl::StrFormat("window   %s %s %s\n", v1::WindowKind_Name(w.kind()), when, E(w.reason())));
  }
  if (c.stats) {
    const auto& s = *c.stats;
    out_.Put(absl::StrFormat("stats    records=%" PRIu64 " dropped_by_cupti=%" PRIu64 " buffers_refused=%" PRIu64
                             " incomplete=%" PRIu64 " callback_time=%" PRIu64 "ns writer_time=%" PRIu64
                             "ns cupti_overhead=%" PRIu64 "ns\n",
                             s.records_written(), s.records_dropped_by_cupti(), s.buffers_refused_at_cap(),
                             s.records_incomplete(), s.callback_time_ns(), s.writer_time_ns(), s.cupti_overhead_ns()));
    // A duty cycle that detached CUPTI between its windows (CUSCOPE_DUTY_DETACH).
    if (s.cupti_detaches() + s.cupti_detaches_given_up() + s.cupti_attaches() > 0) {
      out_.Put(absl::StrFormat("attach   cupti_detaches=%" PRIu64 " given_up=%" PRIu64 " attaches=%" PRIu64
                               " buffers_not_walked=%" PRIu64 "\n",
                               s.cupti_detaches(), s.cupti_detaches_given_up(), s.cupti_attaches(),
                               s.buffers_not_walked()));
    }
  }
}

void ChunkPrinter::Print(const core::DecodedChunk& c) {
  if (!PrintActivity(c) || !PrintAnnotations(c) || !PrintStacks(c) || !PrintSamples(c)) return;
  PrintNotes(c);
}

}  // namespace

std::string RelativeMicroseconds(uint64_t t, uint64_t origin) {
  const bool before = t < origin;
  const uint64_t ns = before ? origin - t : t - origin;
  return absl::StrFormat("%c%" PRIu64 ".%03" PRIu64 "us", before ? '-' : '+', ns / 1000, ns % 1000);
}

absl::StatusOr<DumpResult> DumpTrace(core::TraceReader& reader, const DumpOptions& options, std::FILE* out) {
  BoundedLines lines(out, options.byte_bound);
  const auto over_the_bound = [&] {
    return absl::ResourceExhaustedError(absl::StrCat("dump stopped after ", lines.bytes(), " bytes: its bound is ",
                                                     options.byte_bound, " bytes, ", options.bound_reason));
  };
  if (!lines.Put(HeaderText(reader.header()))) return over_the_bound();
  const uint64_t origin = reader.header().session().start_time_ns();
  absl::flat_hash_set<uint32_t> stacks_shown;
  uint64_t printed = 0;
  core::DecodedChunk c;
  while (printed < options.record_limit && !lines.over()) {
    absl::StatusOr<bool> more = reader.Next(&c);
    if (!more.ok()) {
      return absl::DataLossError(absl::StrCat(more.status().message(), "; records before it were printed"));
    }
    if (!*more) break;
    ChunkPrinter(reader.dictionary(), origin, lines, options.record_limit, printed, stacks_shown).Print(c);
  }
  if (lines.over()) return over_the_bound();
  return DumpResult{std::min(printed, options.record_limit), lines.bytes()};
}

}  // namespace cuscope::cli
