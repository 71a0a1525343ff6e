// cuscope::Session and the C API: the ways in for programs that link cuscope.
#include "cuscope/session.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cuscope/cuscope.h"
#include "cuscope/region.h"
#include "lib/settings/config.h"
#include "lib/cupti/activity_collector.h"
#include "lib/cupti/device_info.h"
#include "lib/inject/process_hooks.h"
#include "lib/inject/session_config.h"

namespace cuscope {

// The C API's last error: only the C functions below read or set it.
std::mutex g_error_mu;
std::string g_last_error;

int Fail(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_error_mu);
  g_last_error = message;
  return 1;
}

// Starts a linked session (Session::Start, cuscope_start): a failure is also one line on stderr
// unless the configuration asks for quiet.
absl::Status StartLinked(const settings::Config& config) {
  absl::Status st = inject::StartWithConfig(config, "session");
  if (!st.ok() && !config.quiet) inject::PrintLine(absl::StrCat(st.message(), "; profiling is off"));
  return st;
}

// Everything a Session holds; out of the public header so that it can grow without changing the
// class's layout.
struct Session::Impl {
  explicit Impl(SessionOptions o) : options(std::move(o)) {}
  SessionOptions options;
  bool active = false;
  std::string error;
  std::string output_path;
};

Session::Session(SessionOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Session::~Session() {
  if (impl_->active) Stop();
}

bool Session::Start() {
  Impl& s = *impl_;
  if (s.active) return true;
  auto parsed = inject::ConfigFromSessionOptions(s.options);
  if (!parsed.ok()) {
    s.error = std::string(parsed.status().message());
    return false;
  }
  // The activity kinds, like every option, were checked by the parser.
  absl::Status st = StartLinked(*parsed);
  if (!st.ok()) {
    s.error = std::string(st.message());
    return false;
  }
  s.active = true;
  s.output_path = cupti::CollectorOutputPath();
  s.error.clear();
  return true;
}

bool Session::Flush() {
  Impl& s = *impl_;
  if (!s.active) {
    s.error = "the session is not active";
    return false;
  }
  absl::Status st = cupti::FlushCollector();
  if (!st.ok()) s.error = std::string(st.message());
  return st.ok();
}

bool Session::Stop() {
  Impl& s = *impl_;
  if (!s.active) return true;
  s.active = false;
  absl::Status st = inject::StopAndReport(s.options.quiet);
  if (!st.ok()) s.error = std::string(st.message());
  return st.ok();
}

bool Session::BeginTraceWindow(double duration_seconds) {
  Impl& s = *impl_;
  absl::Status st = s.active ? cupti::OpenCollectorTraceWindow(duration_seconds)
                             : absl::FailedPreconditionError("the session is not active");
  if (!st.ok()) s.error = std::string(st.message());
  return st.ok();
}

bool Session::EndTraceWindow() {
  Impl& s = *impl_;
  absl::Status st =
      s.active ? cupti::CloseCollectorTraceWindow() : absl::FailedPreconditionError("the session is not active");
  if (!st.ok()) s.error = std::string(st.message());
  return st.ok();
}

bool Session::Snapshot(const std::string& path, double after_seconds) {
  Impl& s = *impl_;
  absl::Status st =
      s.active ? cupti::SnapshotCollector(path, after_seconds) : absl::FailedPreconditionError("the session is not active");
  if (!st.ok()) s.error = std::string(st.message());
  return st.ok();
}

bool Session::MarkStep(double seconds) {
  Impl& s = *impl_;
  if (!s.active) return false;
  absl::StatusOr<bool> started = cupti::MarkCollectorStep(seconds);
  if (!started.ok()) {
    s.error = std::string(started.status().message());
    return false;
  }
  return *started;
}

int Session::prometheus_port() const { return impl_->active ? cupti::CollectorPrometheusPort() : 0; }

bool Session::active() const { return impl_->active; }
const std::string& Session::error() const { return impl_->error; }
const std::string& Session::output_path() const { return impl_->output_path; }

}  // namespace cuscope

using cuscope::Fail;
using cuscope::g_error_mu;
using cuscope::g_last_error;

extern "C" {

// As Session::Start: a failure is one line on stderr unless CUSCOPE_QUIET, and the error.
int cuscope_start(const char* output) {
  auto config = cuscope::settings::ParseConfigFromEnvironment(cuscope::settings::ProcessEnvironment());
  if (!config.ok()) {
    cuscope::inject::PrintLine(absl::StrCat(config.status().message(), "; profiling is off"));
    return Fail(std::string(config.status().message()));
  }
  if (output != nullptr) config->output = output;
  absl::Status st = cuscope::StartLinked(*config);
  return st.ok() ? 0 : Fail(std::string(st.message()));
}

int cuscope_flush(void) {
  absl::Status st = cuscope::cupti::FlushCollector();
  return st.ok() ? 0 : Fail(std::string(st.message()));
}

// As Session::Stop: nothing to stop is not an error.
int cuscope_stop(void) {
  if (!cuscope::cupti::CollectorActive()) return 0;
  absl::Status st = cuscope::inject::StopAndReport(cuscope::inject::SessionQuiet());
  return st.ok() ? 0 : Fail(std::string(st.message()));
}

int cuscope_snapshot(const char* path, double after_seconds) {
  absl::Status st = cuscope::cupti::SnapshotCollector(path != nullptr ? path : "", after_seconds);
  return st.ok() ? 0 : Fail(std::string(st.message()));
}

int cuscope_mark_step(double seconds) {
  absl::StatusOr<bool> started = cuscope::cupti::MarkCollectorStep(seconds);
  return started.ok() ? 0 : Fail(std::string(started.status().message()));
}

void cuscope_range_push(const char* name) { nvtxRangePushA(name != nullptr ? name : ""); }
void cuscope_range_pop(void) { nvtxRangePop(); }
void cuscope_mark(const char* message) { nvtxMarkA(message != nullptr ? message : ""); }

void cuscope_request_begin(uint64_t request_id, const char* route) {
  cuscope::cupti::BeginCollectorScope(request_id, route, nullptr, 0, /*batch=*/false);
}
void cuscope_request_end(void) { cuscope::cupti::EndCollectorScope(/*batch=*/false); }
// A batch's own id: the first request's, so a batch scope names something a person can find.
void cuscope_batch_begin(const uint64_t* request_ids, size_t count) {
  const uint64_t id = request_ids != nullptr && count > 0 ? request_ids[0] : 0;
  cuscope::cupti::BeginCollectorScope(id, nullptr, request_ids, count, /*batch=*/true);
}
void cuscope_batch_end(void) { cuscope::cupti::EndCollectorScope(/*batch=*/true); }

const char* cuscope_last_error(void) {
  std::lock_guard<std::mutex> lock(g_error_mu);
  return g_last_error.c_str();
}

size_t cuscope_describe_system(char* buffer, size_t size) {
  const std::string text = cuscope::cupti::DescribeSystem(cuscope::cupti::QuerySystem());
  if (buffer != nullptr && size > 0) {
    const size_t n = text.size() < size - 1 ? text.size() : size - 1;
    text.copy(buffer, n);
    buffer[n] = '\0';
  }
  return text.size();
}

}  // extern "C"
