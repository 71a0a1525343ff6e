// example_inference_server: a synthetic C++ inference server, the workload for cuscope's monitor
// mode. Worker threads, each with its own CUDA stream and cuBLAS handle, serve requests (GEMMs,
// elementwise kernels, a small device-to-host result) from an open-loop Poisson load generator or
// in a closed loop, and the run ends with throughput, latency percentiles and a checksum of fixed
// verification requests: the same checksum with and without cuscope shows it changes no result.
//
// Every request runs inside a cuscope request scope of its route (--requests): "chat", the model,
// and with --interference "bulk", worker threads whose requests are each one kernel holding every
// SM, so that chat requests queue on the GPU behind them (the case cuscope's per-request queueing
// figure is for; without --interference, its negative control). --request-log writes the server's
// own service time of every request, to hold against cuscope's.
// `--help` lists the flags (server_options.h).
#include <cstdio>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "examples/inference_server/bulk_replica.h"
#include "examples/inference_server/cuscope_wiring.h"
#include "examples/inference_server/latency_stats.h"
#include "examples/inference_server/load_generator.h"
#include "examples/inference_server/model.h"
#include "examples/inference_server/request_log.h"
#include "examples/inference_server/server_options.h"
#include "examples/inference_server/worker.h"

namespace inference_server {
namespace {

// Requests 0 .. kVerificationRequests-1 served again after the run, on one worker, in order.
constexpr uint64_t kVerificationRequests = 16;

// The routes, as cuscope's request scopes and the request log name them.
constexpr char kChatRoute[] = "chat";
constexpr char kBulkRoute[] = "bulk";

struct ServedLoad {
  std::vector<WorkerResult> workers;       // the chat route's
  std::vector<WorkerResult> bulk_workers;  // --interference
  uint64_t errors = 0;
  double measured_seconds = 0;
  uint64_t snapshots = 0;          // --snapshot-every: requested and started
  uint64_t snapshots_refused = 0;  // the previous one still being written, or an error
};

// Runs the workers (and, under open-loop load, the generator) until the measured time is over.
ServedLoad ServeLoad(const ServerOptions& options, std::vector<std::unique_ptr<ModelReplica>>& replicas,
                     std::vector<std::unique_ptr<BulkReplica>>& bulk_replicas, ServerProfiling& profiling) {
  const Clock::time_point start = Clock::now();
  const auto seconds = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
  const Clock::time_point measure_from = start + seconds(options.warmup_seconds);
  const Clock::time_point end = measure_from + seconds(options.duration_seconds);

  RequestQueue queue;
  ClosedLoopSource closed_loop(end);
  std::function<std::optional<Request>()> next_request;
  std::thread generator;
  if (options.rate > 0) {
    next_request = [&queue] { return queue.Pop(); };
    generator = std::thread([&] { GeneratePoissonArrivals(options.rate, start, end, queue); });
  } else {
    next_request = [&closed_loop] { return closed_loop.Next(); };
  }
  WorkerOptions worker_options{.route = kChatRoute,
                               .request_scopes = options.request_scopes,
                               .log_requests = !options.request_log.empty(),
                               .measure_from = measure_from};
  ServedLoad load;
  load.workers.resize(replicas.size());
  std::vector<std::thread> threads;
  for (size_t w = 0; w < replicas.size(); ++w) {
    threads.emplace_back([&, w] {
      ModelReplica& replica = *replicas[w];
      load.workers[w] = RunWorker([&replica](uint64_t id) { return replica.Serve(id).status(); }, next_request,
                                  worker_options);
    });
  }
  // The bulk route always in a closed loop (a batch job takes the GPU whenever it can), its ids
  // apart from the chat route's, until the same end.
  ClosedLoopSource bulk_source(end, kBulkRequestIdBit);
  const std::function<std::optional<Request>()> next_bulk_request = [&bulk_source] { return bulk_source.Next(); };
  WorkerOptions bulk_options = worker_options;
  bulk_options.route = kBulkRoute;
  load.bulk_workers.resize(bulk_replicas.size());
  for (size_t w = 0; w < bulk_replicas.size(); ++w) {
    threads.emplace_back([&, w] {
      BulkReplica& bulk = *bulk_replicas[w];
      load.bulk_workers[w] = RunWorker([&bulk](uint64_t) { return bulk.Serve(); }, next_bulk_request, bulk_options);
    });
  }
  if (options.trace_window_seconds > 0) {
    std::this_thread::sleep_until(measure_from + seconds(options.duration_seconds / 2));
    absl::Status st = profiling.OpenTraceWindow(options.trace_window_seconds);
    if (!st.ok()) {
      std::fprintf(stderr, "inference_server: %s\n", std::string(st.message()).c_str());
      ++load.errors;
    } else {
      std::fprintf(stderr, "inference_server: trace window of %g s opened\n", options.trace_window_seconds);
    }
  }
  if (options.snapshot_every_seconds > 0) {
    // Snapshots while the workers serve; one still being written when the next is due is refused.
    for (auto next = measure_from; next + seconds(options.snapshot_every_seconds) < end;) {
      next += seconds(options.snapshot_every_seconds);
      std::this_thread::sleep_until(next);
      if (profiling.Snapshot().ok()) {
        ++load.snapshots;
      } else {
        ++load.snapshots_refused;
      }
    }
  }
  if (generator.joinable()) generator.join();
  for (std::thread& t : threads) t.join();

  Clock::time_point last = end;
  for (const WorkerResult& r : load.workers) {
    if (!r.status.ok()) {
      std::fprintf(stderr, "inference_server: worker failed: %s\n", std::string(r.status.message()).c_str());
      ++load.errors;
    }
    // Open loop: requests that arrived before `end` are served after it.
    if (r.last_completion > last) last = r.last_completion;
  }
  // The measured time is the chat route's: a bulk request still running at `end` does not stretch it.
  for (const WorkerResult& r : load.bulk_workers) {
    if (!r.status.ok()) {
      std::fprintf(stderr, "inference_server: bulk worker failed: %s\n", std::string(r.status.message()).c_str());
      ++load.errors;
    }
  }
  load.measured_seconds = std::chrono::duration<double>(last - measure_from).count();
  return load;
}

// Outside request scopes: these requests repeat the ids 0 .. kVerificationRequests-1 already
// served, and are a check of the results, not load.
absl::StatusOr<uint64_t> VerificationChecksum(ModelReplica& replica) {
  uint64_t checksum = 0xcbf29ce484222325ull;
  for (uint64_t id = 0; id < kVerificationRequests; ++id) {
    absl::StatusOr<uint64_t> digest = replica.Serve(id);
    if (!digest.ok()) return digest.status();
    checksum = (checksum ^ *digest) * 0x100000001b3ull;
  }
  return checksum;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "inference_server: %s\n", std::string(status.message()).c_str());
  return 1;
}

int Run(const ServerOptions& options) {
  // Started first, as an always-on server would: cuscope sees the model being set up too.
  absl::StatusOr<std::unique_ptr<ServerProfiling>> profiling = ServerProfiling::Start(options);
  if (!profiling.ok()) return Fail(profiling.status());
  if (options.trace_everything) {
    if (absl::Status st = (*profiling)->OpenTraceWindow(0); !st.ok()) return Fail(st);
  }

  absl::StatusOr<std::unique_ptr<ModelWeights>> weights =
      ModelWeights::Create({.hidden = options.hidden, .batch = options.batch, .layers = options.layers});
  if (!weights.ok()) return Fail(weights.status());
  std::vector<std::unique_ptr<ModelReplica>> replicas;
  for (int w = 0; w < options.workers; ++w) {
    absl::StatusOr<std::unique_ptr<ModelReplica>> replica = ModelReplica::Create(**weights);
    if (!replica.ok()) return Fail(replica.status());
    // One request each before the clock starts: cuBLAS's and the kernels' first-use costs. Outside
    // a request scope, like the verification requests: it is no request of the load.
    if (absl::StatusOr<uint64_t> first = (*replica)->Serve(0); !first.ok()) return Fail(first.status());
    replicas.push_back(*std::move(replica));
  }
  std::vector<std::unique_ptr<BulkReplica>> bulk_replicas;
  for (int w = 0; options.interference && w < options.bulk_workers; ++w) {
    absl::StatusOr<std::unique_ptr<BulkReplica>> bulk = BulkReplica::Create(options.bulk_kernel_us);
    if (!bulk.ok()) return Fail(bulk.status());
    // The kernel's first launch (module loading) before the clock starts, as for the model.
    if (absl::Status st = (*bulk)->Serve(); !st.ok()) return Fail(st);
    bulk_replicas.push_back(*std::move(bulk));
  }

  std::string setup = absl::StrFormat(
      "%d workers, %s, batch %d hidden %d layers %d, %g s warm-up + %g s, request scopes %s", options.workers,
      options.rate > 0 ? absl::StrFormat("open loop at %g req/s", options.rate) : "closed loop", options.batch,
      options.hidden, options.layers, options.warmup_seconds, options.duration_seconds,
      options.request_scopes ? "on" : "off");
  if (!bulk_replicas.empty()) {
    absl::StrAppendFormat(&setup, ", interference: %d bulk workers of %g us kernels on %d blocks", options.bulk_workers,
                          options.bulk_kernel_us, bulk_replicas.front()->blocks());
  }
  if (const std::string description = (*profiling)->Description(); !description.empty()) {
    absl::StrAppend(&setup, ", ", description);
  }
  std::fprintf(stderr, "inference_server: %s\n", setup.c_str());

  ServedLoad load = ServeLoad(options, replicas, bulk_replicas, **profiling);
  std::vector<double> latencies;
  for (const WorkerResult& r : load.workers) latencies.insert(latencies.end(), r.latencies_ms.begin(), r.latencies_ms.end());
  const LatencySummary summary = SummarizeLatencies(std::move(latencies), load.measured_seconds, load.errors);
  uint64_t bulk_requests = 0;
  for (const WorkerResult& r : load.bulk_workers) bulk_requests += r.latencies_ms.size();

  absl::StatusOr<uint64_t> checksum = VerificationChecksum(*replicas.front());
  if (!checksum.ok()) return Fail(checksum.status());
  if (options.linger_seconds > 0) {
    std::fprintf(stderr, "inference_server: idle for %g s before stopping cuscope\n", options.linger_seconds);
    std::this_thread::sleep_for(std::chrono::duration<double>(options.linger_seconds));
  }
  if (absl::Status st = (*profiling)->Stop(); !st.ok()) return Fail(st);
  if (!options.request_log.empty()) {
    std::vector<const WorkerResult*> logged;
    for (const WorkerResult& r : load.workers) logged.push_back(&r);
    for (const WorkerResult& r : load.bulk_workers) logged.push_back(&r);
    if (absl::Status st = WriteRequestLog(options.request_log, logged); !st.ok()) return Fail(st);
  }
  if (options.snapshot_every_seconds > 0) {
    std::fprintf(stderr, "inference_server: %llu snapshots written, %llu refused\n",
                 static_cast<unsigned long long>(load.snapshots), static_cast<unsigned long long>(load.snapshots_refused));
  }

  // Bulk requests are load on the GPU, not the server's answers: counted apart from the summary,
  // on stderr under --json so that stdout stays one JSON line.
  const std::string bulk_line = absl::StrFormat("bulk_requests=%u bulk_workers=%d bulk_kernel_us=%g (not in the summary)",
                                                bulk_requests, options.bulk_workers, options.bulk_kernel_us);
  if (options.json) {
    std::printf("%s\n", SummaryJson(summary, *checksum).c_str());
    if (options.interference) std::fprintf(stderr, "inference_server: %s\n", bulk_line.c_str());
  } else {
    std::printf("%s\n", SummaryLine(summary).c_str());
    if (options.interference) std::printf("%s\n", bulk_line.c_str());
    std::printf("checksum=%016llx (results of %llu fixed verification requests)\n",
                static_cast<unsigned long long>(*checksum), static_cast<unsigned long long>(kVerificationRequests));
  }
  return summary.errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace inference_server

int main(int argc, char** argv) {
  absl::StatusOr<inference_server::ServerOptions> options = inference_server::ParseServerOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], std::string(options.status().message()).c_str());
    return 2;
  }
  if (options->help) {
    std::printf("%s", inference_server::ServerUsage(argv[0]).c_str());
    return 0;
  }
  return inference_server::Run(*options);
}
