// cuscope dump: the records of a trace, one per line, in file order.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/launch_sites.h"
#include "lib/cli/arguments.h"
#include "lib/cli/commands.h"
#include "lib/core/terminal_text.h"
#include "lib/core/trace_reader.h"

namespace cuscope::cli {
namespace {

constexpr const char kDumpUsage[] =
    "usage: cuscope dump [--limit N] TRACE\n"
    "Prints the header, then every record with its time relative to the session start.\n";

// Every string from the trace is printed escaped: a name must not drive the terminal.
std::string E(std::string_view s) { return core::EscapeForTerminal(s); }

std::string Rel(uint64_t t, uint64_t origin) {
  const double us = (static_cast<double>(t) - static_cast<double>(origin)) / 1e3;
  return absl::StrFormat("%+.3fus", us);
}

void PrintHeader(const v1::Header& h) {
  const auto& s = h.session();
  std::printf("trace format %u, cuscope %s, entry %s\n", h.format_version(), E(s.library_version()).c_str(),
              E(s.entry()).c_str());
  std::vector<std::string> command_line;
  for (const std::string& arg : s.command_line()) command_line.push_back(E(arg));
  std::printf("process %u on %s: %s\n", s.pid(), E(s.host()).c_str(), absl::StrJoin(command_line, " ").c_str());
  std::printf("CUPTI %u, driver %u, runtime %u, rank %d/%d (local %d)\n", s.cupti_version(), s.driver_version(),
              s.runtime_version(), s.rank(), s.world_size(), s.local_rank());
  std::printf("activity kinds: %s; buffers %" PRIu64 " B, cap %" PRIu64 " B, flush %u ms\n",
              E(absl::StrJoin(h.config().activity_kinds(), ",")).c_str(), h.config().buffer_bytes(),
              h.config().buffer_pool_cap_bytes(), h.config().flush_period_ms());
  for (const auto& d : h.devices()) {
    std::printf("device %u: %s, cc %u.%u, %u SMs, %u warps/SM, peak DRAM %.0f GB/s\n", d.id(), E(d.name()).c_str(),
                d.compute_capability_major(), d.compute_capability_minor(), d.sm_count(), d.max_warps_per_sm(),
                d.peak_dram_bytes_per_second() / 1e9);
  }
}

}  // namespace

int RunDump(const Args& args) {
  std::string path;
  uint64_t limit = UINT64_MAX;
  // A mistake in the command line's shape is shown with the usage after it; the messages carry
  // their own line ends for that reason.
  const auto unexpected = [](const std::string& arg) {
    return absl::StrCat("unexpected argument ", E(arg), "\n", kDumpUsage);
  };
  ArgumentParser parser;
  parser.Option({"--limit"}, unexpected("--limit"), [&](const std::string& v) {
    if (!absl::SimpleAtoi(v, &limit)) return absl::InvalidArgumentError("--limit needs a number\n");
    return absl::OkStatus();
  });
  parser.Positional([&](const std::string& arg) {
    if (!path.empty()) return absl::InvalidArgumentError(unexpected(arg));
    path = arg;
    return absl::OkStatus();
  });
  parser.UnknownOptionMessage(unexpected);
  absl::StatusOr<ParsedArguments> parsed = parser.Parse(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "cuscope: %s", std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (parsed->help) {
    std::fputs(kDumpUsage, stdout);
    return 0;
  }
  if (path.empty()) {
    std::fputs(kDumpUsage, stderr);
    return 2;
  }
  auto reader = core::TraceReader::Open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "cuscope: %s\n", E(std::string(reader.status().message())).c_str());
    return 2;
  }
  core::TraceReader& r = **reader;
  PrintHeader(r.header());
  const uint64_t origin = r.header().session().start_time_ns();
  const core::Dictionary& d = r.dictionary();
  core::DecodedChunk c;
  uint64_t printed = 0;
  int rc = 0;
  while (printed < limit) {
    auto more = r.Next(&c);
    if (!more.ok()) {
      std::fprintf(stderr, "cuscope: %s; records before it were printed\n", E(std::string(more.status().message())).c_str());
      rc = 1;
      break;
    }
    if (!*more) break;
    for (const auto& k : c.kernels) {
      if (printed++ >= limit) break;
      const auto& s = d.signature(k.signature);
      // queued_lead: how long before its start the host queued the launch (latency timestamps).
      std::printf("kernel   %s dur=%" PRIu64 "ns dev=%u ctx=%u stream=%u corr=%" PRIu64
                  " grid=(%d,%d,%d) block=(%d,%d,%d) regs=%u smem=%d+%d%s%s%s %s\n",
                  Rel(k.start, origin).c_str(), k.end - k.start, s.device(), s.context(), k.stream, k.correlation_id,
                  s.grid_x(), s.grid_y(), s.grid_z(), s.block_x(), s.block_y(), s.block_z(), s.registers_per_thread(),
                  s.static_shared_memory(), s.dynamic_shared_memory(),
                  k.graph_id ? absl::StrCat(" graph=", k.graph_id, "/", k.graph_node_id).c_str() : "",
                  k.queued != 0 ? absl::StrCat(" queued_lead=", static_cast<int64_t>(k.start - k.queued), "ns").c_str() : "",
                  k.replayed() ? " replayed" : "", E(d.str(s.name())).c_str());
    }
    for (const auto& a : c.api_calls) {
      if (printed++ >= limit) break;
      const auto& f = d.function(a.function);
      const auto& t = d.thread(a.thread);
      std::printf("api      %s dur=%" PRIu64 "ns %s tid=%" PRIu64 " corr=%" PRIu64 " rc=%u %s\n",
                  Rel(a.start, origin).c_str(), a.end - a.start, f.domain() == v1::API_DOMAIN_DRIVER ? "driver" : "runtime",
                  t.tid(), a.correlation_id, a.return_code, E(d.str(f.name())).c_str());
    }
    for (const auto& m : c.memcpys) {
      if (printed++ >= limit) break;
      std::printf("memcpy   %s dur=%" PRIu64 "ns %s %s->%s bytes=%" PRIu64 " stream=%u corr=%" PRIu64 "%s\n",
                  Rel(m.start, origin).c_str(), m.end - m.start, v1::CopyKind_Name(m.copy_kind).c_str(),
                  v1::MemoryKind_Name(m.src_kind).c_str(), v1::MemoryKind_Name(m.dst_kind).c_str(), m.bytes, m.stream,
                  m.correlation_id, m.async ? " async" : "");
    }
    for (const auto& m : c.memsets) {
      if (printed++ >= limit) break;
      std::printf("memset   %s dur=%" PRIu64 "ns bytes=%" PRIu64 " %s stream=%u corr=%" PRIu64 "%s\n",
                  Rel(m.start, origin).c_str(), m.end - m.start, m.bytes, v1::MemoryKind_Name(m.memory_kind).c_str(),
                  m.stream, m.correlation_id, m.async ? " async" : "");
    }
    for (const auto& s : c.syncs) {
      if (printed++ >= limit) break;
      std::printf("sync     %s dur=%" PRIu64 "ns %s stream=%d event=%u corr=%" PRIu64 "\n", Rel(s.start, origin).c_str(),
                  s.end - s.start, v1::SyncType_Name(s.type).c_str(), static_cast<int>(s.stream), s.event,
                  s.correlation_id);
    }
    for (const auto& n : c.nvtx) {
      if (printed++ >= limit) break;
      std::printf("nvtx     %s %s id=%" PRIu64 " tid=%" PRIu64 " %s%s%s\n", Rel(n.time, origin).c_str(),
                  v1::NvtxKind_Name(n.kind).c_str(), n.id, d.thread(n.thread).tid(), E(d.str(n.domain)).c_str(),
                  n.domain ? ":" : "", E(d.str(n.name)).c_str());
    }
    for (const auto& m : c.memory_ops) {
      if (printed++ >= limit) break;
      std::printf("memory   %s %s %s bytes=%" PRIu64 " addr=0x%" PRIx64 " stream=%u corr=%" PRIu64 "\n",
                  Rel(m.time, origin).c_str(), v1::MemoryOperationType_Name(m.type).c_str(),
                  v1::MemoryKind_Name(m.memory_kind).c_str(), m.bytes, m.address, m.stream, m.correlation_id);
    }
    for (const auto& o : c.overheads) {
      if (printed++ >= limit) break;
      std::printf("overhead %s dur=%" PRIu64 "ns %s tid=%" PRIu64 "\n", Rel(o.start, origin).c_str(), o.end - o.start,
                  E(d.str(o.kind)).c_str(), d.thread(o.thread).tid());
    }
    for (const auto& m : c.metrics) {
      if (printed++ >= limit) break;
      std::printf("metrics  corr=%" PRIu64 " passes=%u grid=%u,%u,%u block=%u,%u,%u %s:", m.correlation_id, m.pass_count,
                  m.grid[0], m.grid[1], m.grid[2], m.block[0], m.block[1], m.block[2], E(d.str(m.kernel_name)).c_str());
      for (const auto& [name, value] : m.values) std::printf(" %s=%g", E(d.str(name)).c_str(), value);
      std::printf("\n");
    }
    // A call stack: its frames, innermost first, as the analysis names them.
    const auto frames = [&d](uint32_t stack) {
      std::string out;
      if (!d.has_stack(stack)) return out;
      for (uint32_t f : d.stack(stack).frames()) absl::StrAppend(&out, out.empty() ? "" : " <- ", analysis::FrameText(d, f));
      return E(out);
    };
    for (const auto& l : c.launch_stacks) {
      if (printed++ >= limit) break;
      std::printf("stack    corr=%" PRIu64 " id=%u %s\n", l.correlation_id, l.stack, frames(l.stack).c_str());
    }
    for (const auto& g : c.graph_nodes) {
      if (printed++ >= limit) break;
      if (g.stack != 0) {
        std::printf("graphnode node=%" PRIu64 " created %s thread=%u stack=%u %s\n", g.node_id,
                    Rel(g.created_ns, origin).c_str(), g.thread, g.stack, frames(g.stack).c_str());
      } else {
        std::printf("graphnode node=%" PRIu64 " cloned from node=%" PRIu64 "\n", g.node_id, g.original_node_id);
      }
    }
    for (const auto& cs : c.counter_samples) {
      if (printed++ >= limit) break;
      std::printf("counter  %s dur=%" PRIu64 "ns dev=%u %s %s=%g\n", Rel(cs.start, origin).c_str(), cs.end - cs.start,
                  cs.device, cs.source == v1::COUNTER_SOURCE_NVML ? "nvml" : "pm", E(d.str(cs.name)).c_str(), cs.value);
    }
    if (c.top_down) {
      std::printf("top-down %s window kernel time %" PRIu64 "ns, chosen:\n", Rel(c.top_down->time_ns(), origin).c_str(),
                  c.top_down->window_kernel_ns());
      for (const auto& k : c.top_down->kernels()) {
        std::printf("hot      total=%" PRIu64 "ns launches=%" PRIu64 " dev=%u grid=%u,%u,%u block=%u,%u,%u %s\n",
                    k.total_ns(), k.launches(), k.device(), k.grid_x(), k.grid_y(), k.grid_z(), k.block_x(),
                    k.block_y(), k.block_z(), E(d.str(k.name())).c_str());
      }
    }
    for (const auto& m : c.monitor_intervals) {
      if (printed++ >= limit) break;
      std::printf("monitor  %s .. %s launch_calls=%" PRIu64 " sync_calls=%" PRIu64 " sync_wait=%" PRIu64
                  "ns dropped=%" PRIu64 " late=%" PRIu64 "\n",
                  Rel(m.start_ns(), origin).c_str(), Rel(m.end_ns(), origin).c_str(), m.launch_calls(), m.sync_calls(),
                  m.sync_wait_ns(), m.records_dropped_by_cupti(), m.late_records());
      for (const auto& dev : m.devices()) {
        std::printf("  device %u busy=%" PRIu64 "ns idle=%" PRIu64 "ns kernels=%" PRIu64 " kernel_time=%" PRIu64
                    "ns copies=%d memsets=%" PRIu64 "\n",
                    dev.device(), dev.busy_ns(), dev.idle_ns(), dev.kernels(), dev.kernel_gpu_ns(), dev.copies_size(),
                    dev.memsets());
      }
    }
    for (const auto& w : c.windows) {
      std::string when;
      if (w.start_ns() != 0 && w.end_ns() != 0) {
        when = absl::StrCat("spans ", Rel(w.start_ns(), origin), " .. ", Rel(w.end_ns(), origin));
      } else if (w.start_ns() != 0) {
        when = absl::StrCat("opens ", Rel(w.start_ns(), origin));
      } else {
        when = absl::StrCat("closes ", Rel(w.end_ns(), origin));
      }
      std::printf("window   %s %s %s\n", v1::WindowKind_Name(w.kind()).c_str(), when.c_str(), E(w.reason()).c_str());
    }
    if (c.stats) {
      const auto& s = *c.stats;
      std::printf("stats    records=%" PRIu64 " dropped_by_cupti=%" PRIu64 " buffers_refused=%" PRIu64
                  " incomplete=%" PRIu64 " callback_time=%" PRIu64 "ns writer_time=%" PRIu64 "ns cupti_overhead=%" PRIu64 "ns\n",
                  s.records_written(), s.records_dropped_by_cupti(), s.buffers_refused_at_cap(), s.records_incomplete(),
                  s.callback_time_ns(),
                  s.writer_time_ns(), s.cupti_overhead_ns());
    }
  }
  if (r.tail_bytes_dropped() > 0) {
    std::fprintf(stderr, "cuscope: the trace ends in an incomplete block: %" PRIu64 " bytes at the end dropped\n",
                 r.tail_bytes_dropped());
  }
  return rc;
}

}  // namespace cuscope::cli
