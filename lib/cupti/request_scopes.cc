#include "lib/cupti/request_scopes.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "lib/core/utf8.h"

namespace cuscope::cupti {
namespace {

struct RouteTable {
  std::atomic<size_t> count{0};
  char names[kMaxRoutes][kMaxRouteBytes + 1] = {};
  std::mutex mu;  // taken only to add a name
};

RouteTable& Routes() {
  static auto* table = new RouteTable();  // never freed: records point at its names
  return *table;
}

struct OpenScope {
  uint64_t start = 0;
  uint64_t id = 0;
  std::string_view route;
  bool batch = false;
  bool recorded = false;  // its begin was recorded
  uint32_t batch_count = 0;
  uint64_t generation = 0;
};

struct ScopeStack {
  static constexpr int kDepth = 8;
  OpenScope scopes[kDepth];
  int depth = 0;
  int overflow = 0;  // scopes opened past kDepth, closed without a record
  // The ids of the outermost open batch (a batch inside a batch keeps no ids).
  uint64_t batch_ids[core::kMaxBatchRequests];
  int batch_owner = -1;
};
thread_local ScopeStack t_scopes;

struct ThisThread {
  uint32_t pid = static_cast<uint32_t>(::getpid());
  uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
};
const ThisThread& CurrentThread() {
  thread_local const ThisThread thread;
  return thread;
}

std::atomic<uint64_t> g_generation{0};

}  // namespace

namespace {

// The route as it is kept: at most kMaxRouteBytes, whole UTF-8 characters only, and every byte
// that is not part of one replaced by '?' (trace strings are UTF-8: a reader refuses others).
size_t CleanRoute(const char* route, char* out) {
  const std::string_view raw(route, strnlen(route, kMaxRouteBytes + 4));
  size_t n = 0;
  for (size_t i = 0; i < raw.size();) {
    const size_t length = core::Utf8SequenceLength(raw, i);
    const size_t take = length == 0 ? 1 : length;
    if (n + take > kMaxRouteBytes) break;
    if (length == 0) {
      out[n++] = '?';
    } else {
      std::memcpy(out + n, raw.data() + i, length);
      n += length;
    }
    i += take;
  }
  out[n] = '\0';
  return n;
}

}  // namespace

std::string_view InternRoute(const char* route) {
  if (route == nullptr || route[0] == '\0') return {};
  char clean[kMaxRouteBytes + 1];
  const std::string_view name(clean, CleanRoute(route, clean));
  RouteTable& t = Routes();
  // Compared by text: a caller's buffer may hold another route at the same address later.
  size_t n = t.count.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    if (name == t.names[i]) return t.names[i];
  }
  std::lock_guard<std::mutex> lock(t.mu);
  n = t.count.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i) {
    if (name == t.names[i]) return t.names[i];
  }
  if (n + 1 >= kMaxRoutes) {
    // The last slot holds "other", for every name past the table.
    if (n + 1 == kMaxRoutes) {
      std::memcpy(t.names[n], "other", 6);
      t.count.store(n + 1, std::memory_order_release);
      return t.names[n];
    }
    return t.names[kMaxRoutes - 1];
  }
  std::memcpy(t.names[n], name.data(), name.size());
  t.names[n][name.size()] = '\0';
  t.count.store(n + 1, std::memory_order_release);
  return t.names[n];
}

RequestScopes::RequestScopes(CuptiApi& cupti, Sink sink, std::function<bool()> recording, uint64_t slow_ns,
                             std::function<void(const core::RequestScopeActivity&)> slow)
    : cupti_(cupti),
      sink_(std::move(sink)),
      recording_(std::move(recording)),
      slow_ns_(slow_ns),
      slow_(std::move(slow)),
      generation_(g_generation.fetch_add(1) + 1) {}

void RequestScopes::Begin(uint64_t id, const char* route, const uint64_t* batch_requests, size_t batch_count,
                          bool batch) {
  ScopeStack& stack = t_scopes;
  // Scopes left open by an earlier session (its end came after that session stopped, so nothing
  // popped them) must not hold this one's depth or batch ids.
  if (stack.depth > 0 && stack.scopes[stack.depth - 1].generation != generation_) {
    stack.depth = 0;
    stack.overflow = 0;
    stack.batch_owner = -1;
  }
  if (stack.depth == ScopeStack::kDepth) {
    ++stack.overflow;
    return;
  }
  OpenScope& s = stack.scopes[stack.depth];
  s = OpenScope{};
  s.id = id;
  s.batch = batch;
  s.generation = generation_;
  if (!batch) s.route = InternRoute(route);
  if (batch && stack.batch_owner < 0 && batch_requests != nullptr) {
    s.batch_count = static_cast<uint32_t>(std::min(batch_count, core::kMaxBatchRequests));
    std::memcpy(stack.batch_ids, batch_requests, s.batch_count * sizeof(uint64_t));
    stack.batch_owner = stack.depth;
  }
  ++stack.depth;
  s.start = cupti_.Timestamp();
  s.recorded = recording_();
  if (!s.recorded) return;
  core::RequestScopeActivity begin;
  begin.start = s.start;
  begin.pid = CurrentThread().pid;
  begin.tid = CurrentThread().tid;
  begin.id = id;
  begin.batch = batch;
  begin.route = s.route;
  if (stack.batch_owner == stack.depth - 1) {
    begin.batch_requests = stack.batch_ids;
    begin.batch_count = s.batch_count;
  }
  sink_(begin);
}

void RequestScopes::End(bool batch) {
  ScopeStack& stack = t_scopes;
  if (stack.overflow > 0) {
    --stack.overflow;
    return;
  }
  if (stack.depth == 0 || stack.scopes[stack.depth - 1].batch != batch) return;
  const int at = --stack.depth;
  const OpenScope& s = stack.scopes[at];
  const bool owns_ids = stack.batch_owner == at;
  if (owns_ids) stack.batch_owner = -1;
  // A scope begun before this session, or while nothing was recorded, leaves no record.
  if (s.generation != generation_ || !s.recorded) return;
  core::RequestScopeActivity end;
  end.start = s.start;
  end.end = std::max(cupti_.Timestamp(), s.start + 1);
  end.pid = CurrentThread().pid;
  end.tid = CurrentThread().tid;
  end.id = s.id;
  end.batch = s.batch;
  end.route = s.route;
  if (owns_ids) {
    end.batch_requests = stack.batch_ids;
    end.batch_count = s.batch_count;
  }
  sink_(end);
  if (slow_ && slow_ns_ > 0 && !s.batch && end.end - end.start > slow_ns_) slow_(end);
}

}  // namespace cuscope::cupti
