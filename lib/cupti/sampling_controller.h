// The collector's GPU-counter room: when the counters over time (PM sampling and NVML) are
// prepared, started, stopped and given back.
//
// A sampler runs while a timeline window is open and the program has a CUDA context (PM sampling
// needs an initialized driver). Preparing one takes ~0.4 s, so the first window's sampler is
// prepared ahead; later windows prepare when they open. Once the top-down's window closed the
// counters are given back for good, so the Range Profiler finds them free. A sampler that cannot be
// set up is named in one line and sampling stays off; the timeline goes on.
//
// The control thread calls Reconcile; the exit handler and the collector's stop call ShutDown.
//
// Exit. A program may exit at any moment, and exit runs the handlers of std::atexit and the
// destructors of static objects newest first. The profiler host libraries create static objects
// the first time a sampler is set up; a program that exits while a sampler decodes or is being set
// up would destroy them under it (a crash at exit). So the exit handler that stops the counters is
// registered after the first set-up, and runs before those objects go; and when the session starts
// with the program (no CUDA context yet), the first set-up runs on the program's own thread, at
// its first CUDA call that does work (OnProgramCall), so the program cannot exit during it.
#ifndef CUSCOPE_LIB_CUPTI_SAMPLING_CONTROLLER_H_
#define CUSCOPE_LIB_CUPTI_SAMPLING_CONTROLLER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "lib/settings/config.h"
#include "lib/cupti/cupti_api.h"
#include "lib/cupti/gpu_counter_sampler.h"
#include "lib/cupti/trace_pipeline.h"

namespace cuscope::cupti {

class SamplingController {
 public:
  enum class State {
    kIdle,      // no sampler
    kPrepared,  // set up ahead of a window, counters held, not sampling yet
    kRunning,
    kOff,       // not again in this session: a set-up failed, or the session is ending
  };

  // What the rest of the collector says about sampling now.
  struct Conditions {
    bool possible = false;  // a context exists, no write failed, the top-down's window has not closed
    bool window_open = false;
  };

  // With GPU counters asked for, the profiler host libraries are loaded now; `at_exit` is
  // registered with std::atexit after the first set-up (once per process).
  SamplingController(const settings::Config& config, CuptiApi& cupti, TracePipeline& pipeline,
                     std::function<void(const std::string&)> warn, void (*at_exit)());

  // Whether Reconcile has work: start, stop, prepare ahead or give the counters back.
  bool Due(Conditions c, bool prepare_ahead) const;
  // `prepare_ahead`: a sampler may be prepared now, ahead of the first window (false when the
  // window opens soon: preparing holds the calling thread).
  void Reconcile(Conditions c, bool prepare_ahead);
  // No more sampling in this session: a running sampler stops, a prepared one gives the counters back.
  void ShutDown();

  // Before the control thread starts: the first set-up waits for OnProgramCall.
  void PrepareFirstOnProgramThread() { first_on_program_thread_ = true; }
  // Whether OnProgramCall still has work: the first set-up is the program thread's and not done.
  bool AwaitingProgramCall() const { return first_on_program_thread_ && !first_prepared_.load(std::memory_order_acquire); }
  // On the program's thread, at a CUDA call: the first set-up (~0.4 s, once), and the start when
  // the window is open. Returns true for the call that did it, or that found sampling off (the
  // caller then stops watching); false while there is nothing to set up yet (no context).
  bool OnProgramCall(Conditions c);
  // One line, and no GPU counters for the rest of the session.
  void TurnOff(const absl::Status& why);

  State state() const { return state_.load(); }
  CounterTotals totals();

 private:
  bool Possible(Conditions c) const;
  void ReconcileLocked(Conditions c, bool prepare_ahead);  // mu_
  bool ControlThreadMayPrepare() const { return !AwaitingProgramCall(); }
  void RegisterExitHandlerOnce();
  bool PrepareAheadDue(Conditions c, bool prepare_ahead) const;
  std::unique_ptr<GpuCounterSampler> NewSampler();
  void Prepare();         // mu_
  void ReleasePrepared(); // mu_
  void Start();           // mu_
  void Stop();            // mu_

  const settings::Config& config_;
  CuptiApi& cupti_;
  TracePipeline& pipeline_;
  std::function<void(const std::string&)> warn_;
  void (*at_exit_)();
  bool first_on_program_thread_ = false;
  std::atomic<bool> first_prepared_{false};  // the first set-up was tried, on whichever thread

  std::atomic<State> state_{State::kIdle};
  std::atomic<bool> started_once_{false};  // later windows prepare when they open
  std::mutex mu_;                           // starting and stopping
  std::unique_ptr<GpuCounterSampler> prepared_;  // mu_
  // The running sampler; the writer reads its counts under samplers_mu_, the rest is mu_'s.
  std::mutex samplers_mu_;
  std::unique_ptr<GpuCounterSampler> running_;
  CounterTotals done_;  // of the samplers stopped; samplers_mu_
  // The samplers' warnings, each said once however many windows there are.
  std::mutex warned_mu_;
  std::set<std::string> warned_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_SAMPLING_CONTROLLER_H_
