#include "lib/cupti/collector_control.h"

#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <iterator>

#include "absl/strings/str_replace.h"
#include "lib/control/protocol.h"
#include "lib/cupti/activity_collector.h"

namespace cuscope::cupti {

namespace {
std::mutex g_detach_mu;
std::function<void()> g_detach;  // g_detach_mu
}  // namespace

void SetDetachHandler(std::function<void()> stop) {
  std::lock_guard<std::mutex> lock(g_detach_mu);
  g_detach = std::move(stop);
}

v1::ControlReply AnswerControlRequest(const v1::ControlRequest& request) {
  if (request.has_detach()) {
    std::function<void()> stop;
    {
      std::lock_guard<std::mutex> lock(g_detach_mu);
      stop = g_detach;
    }
    if (!stop || !CollectorActive()) return control::ErrorReply("no cuscope session is active in this process");
    // Not on this thread: the session's stop stops the control server, whose thread this is; a
    // moment later, so that this reply goes out first.
    try {
      std::thread([stop = std::move(stop)] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop();
      }).detach();
    } catch (const std::system_error&) {
      return control::ErrorReply("no thread could be started to end the session (the process's thread limit?)");
    }
    return v1::ControlReply();
  }
  if (request.has_status()) {
    auto status = CollectorStatus();
    if (!status.ok()) return control::ErrorReply(status.status().message());
    v1::ControlReply reply;
    *reply.mutable_status() = *std::move(status);
    return reply;
  }
  const v1::CaptureRequest& c = request.capture();
  CaptureSpec spec;
  spec.path = c.path();
  spec.seconds = c.seconds();
  spec.snapshot = c.kind() == v1::CaptureRequest::KIND_SNAPSHOT;
  spec.force_overwrite = c.force_overwrite();
  spec.top_down_kernels = c.top_down_kernels();
  spec.top_down_launches = c.top_down_launches() != 0 ? c.top_down_launches() : control::kDefaultTopDownLaunches;
  spec.top_down_wait_seconds =
      c.top_down_wait_seconds() != 0 ? c.top_down_wait_seconds() : control::kDefaultTopDownWaitSeconds;
  if (absl::Status st = CaptureCollector(spec); !st.ok()) return control::ErrorReply(st.message());
  v1::ControlReply reply;
  reply.set_path(c.path());
  // A top-down's file waits for its launches: at most the wait after the window.
  reply.set_ready_in_seconds(c.seconds() + (spec.top_down_kernels > 0 ? spec.top_down_wait_seconds : 0));
  return reply;
}

const char* ModeName(settings::CollectionMode mode) {
  switch (mode) {
    case settings::CollectionMode::kMonitor:
      return "monitor";
    case settings::CollectionMode::kFlight:
      return "flight";
    case settings::CollectionMode::kTrace:
      break;
  }
  return "trace";
}

std::string ProcessCommandLine() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string line;
  line.resize(4096);
  f.read(line.data(), static_cast<std::streamsize>(line.size()));
  line.resize(static_cast<size_t>(f.gcount()));
  while (!line.empty() && line.back() == '\0') line.pop_back();
  return absl::StrReplaceAll(line, {{std::string(1, '\0'), " "}});
}

}  // namespace cuscope::cupti
