// cuscope's C++ API for programs that link it (an inference server, a benchmark harness).
//
//   cuscope::SessionOptions options;
//   options.output = "server_%p";               // server_<pid>.cuscope
//   cuscope::Session session(options);
//   if (!session.Start()) std::cerr << session.error() << "\n";
//   ... serve traffic ...
//   session.Stop();                              // or let the destructor do it
//
// One session is active per process at a time (CUPTI serves one tool per process). Nothing here
// throws; a failure leaves the program running unprofiled and is described by error().
#ifndef CUSCOPE_SESSION_H_
#define CUSCOPE_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuscope/export.h"

namespace cuscope {

// Each option is the CUSCOPE_* setting of the same meaning (docs/commands.md, docs/collecting.md)
// and is checked the same way: Session::Start refuses what the environment would refuse, and
// error() names the setting.
//
// Binary compatibility: the program builds this struct with its own copy of this header and hands
// it to libcuscope.so by value, so the struct's layout is part of the library's ABI. Adding,
// removing, reordering or retyping a member therefore needs a new SOVERSION (the major number of
// the CMake project VERSION), even at the end of the struct. A default value lives in the
// program's code: changing one reaches only programs built again, and lib/inject/session_config.cc,
// which leaves options at their defaults unset, must change with it. Options that must be added
// without a new SOVERSION belong in Session (a setter whose state lives in Session::Impl), not here.
// The std::string and std::vector members tie the program to the C++ library ABI libcuscope.so was
// built with (libstdc++'s C++11 ABI).
struct SessionOptions {
  // Output file name: %p process id, %h host name, %n sequence number, %q{VAR} environment
  // variable; ".cuscope" is appended if missing.
  std::string output = "cuscope_%p";
  bool force_overwrite = false;
  // Activity kinds: kernel, memcpy, memset, api, runtime, driver, sync, nvtx, memory, overhead,
  // or all. Empty means the default, lean collection: every kind but runtime, driver and sync, the
  // calls the analyzer reads (api) and their synchronization records timed by callbacks
  // (docs/collecting.md, "Lean collection (the default)").
  std::vector<std::string> activity_kinds;
  // One CUPTI buffer, and the cap on all of them together (0 = the defaults: 4 MiB, 128 MiB).
  uint64_t buffer_bytes = 0;
  uint64_t buffer_pool_cap_bytes = 0;
  // How often CUPTI hands partly filled buffers to the writer (0 = 500 ms).
  uint32_t flush_period_ms = 0;
  // Print nothing on stderr.
  bool quiet = false;

  // Kernel internals: Range Profiler metrics for selected launches. `metrics` is a comma-separated
  // list of sets (sol, occupancy, stalls, roofline) and ncu metric names; empty means none. Each
  // profiled launch is replayed once per pass and runs serialized, so select few launches.
  std::string metrics;
  // "" for every kernel, an exact name (mangled, demangled or base name), or "regex:PATTERN".
  std::string kernel_name;
  uint64_t launch_skip = 0;   // matching launches passed over first
  uint64_t launch_count = 0;  // at most this many profiled (0 = no limit)
  // At most this many launches profiled per kernel name + grid + block (0 = no limit).
  uint64_t per_kernel_count = 1;

  // The timeline window: opens `delay_seconds` after Start and closes `duration_seconds` later
  // (0 = at Stop). As CUSCOPE_DELAY and CUSCOPE_DURATION.
  double delay_seconds = 0;
  double duration_seconds = 0;
  // One-run top-down on live traffic: when the window closes, `metrics` (default
  // sol,occupancy,stalls) on the next `top_down_launches` launches of each of the window's
  // `top_down` hottest kernels (name + grid + block). Needs duration_seconds; leave the kernel
  // selection above at its defaults. 0 = off. As CUSCOPE_TOP_DOWN and CUSCOPE_TOP_DOWN_LAUNCHES.
  uint32_t top_down = 0;
  uint64_t top_down_launches = 3;
  // GPU counters over time during the window: "none", "all" or device ids ("0,1"); empty = the
  // default (all with top_down, else none). Samples per second: 0 = 1000. As
  // CUSCOPE_GPU_METRICS_DEVICES and CUSCOPE_GPU_METRICS_FREQUENCY.
  std::string gpu_metrics_devices;
  uint32_t gpu_metrics_frequency_hz = 0;
  // "trace" (or empty): every record goes to the output file. "monitor": always on: no per-record
  // trace; the records are folded into figures per `monitor_interval_ms` (0 = 1000) and device
  // (GPU busy and idle by host cause, kernels by GPU time, copies, syncs, GPU counters), written to
  // the output file as they close (an empty `output` writes no file) and served to Prometheus when
  // `prometheus` is set. Memory stays bounded however long it runs; BeginTraceWindow adds a full
  // trace for a while. As CUSCOPE_MODE and CUSCOPE_MONITOR_INTERVAL.
  // "flight": a flight recorder: every record is kept in memory for the last
  // `flight_span_seconds` (0 = 30), within `flight_size_mib` (0 = 256), and nothing is written
  // until Snapshot. As CUSCOPE_FLIGHT_SPAN and CUSCOPE_FLIGHT_SIZE.
  std::string mode;
  uint32_t monitor_interval_ms = 0;
  // A Prometheus endpoint for the monitor figures: "PORT" or "ADDRESS:PORT" (port 0 picks a free
  // one). A bare port listens on the loopback interface only; name an address ("0.0.0.0:9400") to
  // be scraped from other machines. Empty = none. As CUSCOPE_PROMETHEUS.
  std::string prometheus;
  double flight_span_seconds = 0;
  uint64_t flight_size_mib = 0;
  // Flight mode: a step marked with MarkStep that took longer than this starts a snapshot (0 =
  // never), which also holds `flight_after_seconds` after the step. As
  // CUSCOPE_FLIGHT_STEP_THRESHOLD and CUSCOPE_FLIGHT_AFTER.
  double flight_step_threshold_seconds = 0;
  double flight_after_seconds = 0;
};

// The class holds nothing but a pointer to its state (Session::Impl, in lib/inject/session.cc), so
// its size and layout stay the same when that state changes.
class CUSCOPE_EXPORT Session {
 public:
  explicit Session(SessionOptions options = {});
  ~Session();  // stops the session if it is active
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts recording. False (and error() says why) if CUPTI, the GPU or the output file is not
  // available, or another session or CUPTI tool is active.
  bool Start();
  // Writes everything recorded so far to the file; the session goes on.
  bool Flush();
  // Stops recording and closes the file.
  bool Stop();

  bool active() const;
  const std::string& error() const;
  // The trace file's path once started.
  const std::string& output_path() const;

  // Monitor mode: every record also goes to the trace file from now on, for `duration_seconds`
  // (0 = until EndTraceWindow), the figures going on meanwhile. False (error() says why) outside
  // monitor mode, without an output file, or with a window already open.
  bool BeginTraceWindow(double duration_seconds = 0);
  // Closes the window: back to figures only. False when no window is open.
  bool EndTraceWindow();
  // Flight mode: writes the records kept (the last flight_span_seconds) to `path`, or, when empty,
  // to `output` with the lowest free number (%n, or "_snapshot%n" added); with `after_seconds`,
  // the records of that many seconds after the call too. Returns once the file is created; a
  // thread of cuscope's writes it and prints one line when done, so no thread of the program
  // waits on the disk. False (error() says why) outside flight mode, when the file cannot be
  // created, or while another snapshot is being written.
  bool Snapshot(const std::string& path = "", double after_seconds = 0);
  // Marks the end of one step (a training step, a request) that took `seconds`. In flight mode
  // with flight_step_threshold_seconds set, a slower step starts a snapshot, named by `output`, and
  // returns true; one line says which step. Otherwise false, at the cost of a lock. While a
  // snapshot is being written, slow steps start no other.
  bool MarkStep(double seconds);
  // BeginTraceWindow, EndTraceWindow, Snapshot and MarkStep's snapshot are requests to the
  // session's control thread, answered in the order they come: each waits for its answer, usually
  // well under a millisecond, up to ~0.4 s while the thread prepares the GPU counters, and gives up
  // after 10 s (false; the request still runs when the thread gets to it).
  // The Prometheus endpoint's port once started with `prometheus` set (0 otherwise).
  int prometheus_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuscope

#endif  // CUSCOPE_SESSION_H_
