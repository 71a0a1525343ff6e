// cuscope::Session and the C API: the ways in for programs that link cuscope.
#include "cuscope/session.h"

#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "cuscope/cuscope.h"
#include "cuscope/region.h"
#include "lib/core/config.h"
#include "lib/core/session_config.h"
#include "lib/cupti/activity_collector.h"
#include "lib/cupti/device_info.h"
#include "lib/inject/process_hooks.h"

namespace cuscope {

// The C API's last error: only the C functions below read or set it.
std::mutex g_error_mu;
std::string g_last_error;

int Fail(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_error_mu);
  g_last_error = message;
  return 1;
}

Session::Session(SessionOptions options) : options_(std::move(options)) {}

Session::~Session() {
  if (active_) Stop();
}

bool Session::Start() {
  if (active_) return true;
  auto parsed = core::ConfigFromSessionOptions(options_);
  if (!parsed.ok()) {
    error_ = std::string(parsed.status().message());
    return false;
  }
  // The activity kinds, like every option, were checked by the parser.
  absl::Status st = inject::StartWithConfig(*parsed, "session");
  if (!st.ok()) {
    error_ = std::string(st.message());
    if (!options_.quiet) inject::PrintLine(absl::StrCat(error_, "; profiling is off"));
    return false;
  }
  active_ = true;
  output_path_ = cupti::CollectorOutputPath();
  error_.clear();
  return true;
}

bool Session::Flush() {
  if (!active_) {
    error_ = "the session is not active";
    return false;
  }
  absl::Status st = cupti::FlushCollector();
  if (!st.ok()) error_ = std::string(st.message());
  return st.ok();
}

bool Session::Stop() {
  if (!active_) return true;
  active_ = false;
  absl::Status st = inject::StopAndReport(options_.quiet);
  if (!st.ok()) error_ = std::string(st.message());
  return st.ok();
}

}  // namespace cuscope

using cuscope::Fail;
using cuscope::g_error_mu;
using cuscope::g_last_error;

extern "C" {

int cuscope_start(const char* output) {
  auto config = cuscope::core::ParseConfigFromEnvironment(cuscope::core::ProcessEnvironment());
  if (!config.ok()) return Fail(std::string(config.status().message()));
  if (output != nullptr) config->output = output;
  absl::Status st = cuscope::inject::StartWithConfig(*config, "session");
  return st.ok() ? 0 : Fail(std::string(st.message()));
}

int cuscope_flush(void) {
  absl::Status st = cuscope::cupti::FlushCollector();
  return st.ok() ? 0 : Fail(std::string(st.message()));
}

int cuscope_stop(void) {
  absl::Status st = cuscope::inject::StopAndReport(false);
  return st.ok() ? 0 : Fail(std::string(st.message()));
}

void cuscope_range_push(const char* name) { nvtxRangePushA(name != nullptr ? name : ""); }
void cuscope_range_pop(void) { nvtxRangePop(); }
void cuscope_mark(const char* message) { nvtxMarkA(message != nullptr ? message : ""); }

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
