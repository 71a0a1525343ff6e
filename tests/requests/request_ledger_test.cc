#include "lib/requests/request_ledger.h"

#include <gtest/gtest.h>

#include <vector>

namespace cuscope::requests {
namespace {

using core::ApiCategory;
using core::HostCause;

constexpr uint64_t kThreadA = 101;
constexpr uint64_t kThreadB = 202;
constexpr uint64_t kMs = 1'000'000;

uint64_t Idle(const RequestFigures& f, HostCause cause) { return f.idle_by_cause_ns[static_cast<int>(cause)]; }

TEST(RequestLedgerTest, ARequestGetsItsKernelsCopiesQueueAndSpan) {
  RequestLedger ledger;
  ledger.BeginScope(kThreadA, 10 * kMs, 7, false, "chat", {});
  ledger.Call(kThreadA, 11 * kMs, 11 * kMs + 5000, 1, ApiCategory::kLaunch);
  ledger.Call(kThreadA, 12 * kMs, 12 * kMs + 5000, 2, ApiCategory::kCopy);
  ledger.EndScope(kThreadA, 10 * kMs, 20 * kMs, 7, false, "chat", {});
  ledger.Work(1, 0, 7, 14 * kMs, 17 * kMs, WorkKind::kKernel);
  ledger.Work(2, 0, 7, 17 * kMs, 18 * kMs, WorkKind::kCopy);
  std::vector<RequestFigures> done = ledger.Finalize(20 * kMs);
  ASSERT_EQ(done.size(), 1u);
  const RequestFigures& f = done[0];
  EXPECT_EQ(f.id, 7u);
  EXPECT_EQ(ledger.RouteName(f.route), "chat");
  EXPECT_EQ(f.span_ns(), 10 * kMs);
  EXPECT_DOUBLE_EQ(f.gpu_ns, 3.0 * kMs);
  EXPECT_EQ(f.kernels, 1u);
  EXPECT_DOUBLE_EQ(f.copy_ns, 1.0 * kMs);
  EXPECT_EQ(f.first_queue_ns(), 3 * kMs);  // launched at 11 ms, ran at 14 ms
  // Ready when its launch returned (11.005 ms); the copy, ready at 12.005 ms, waited for the kernel
  // before it on its stream, not for others.
  EXPECT_EQ(f.queue_ns, 3 * kMs - 5000);
  // Idle: 10-14 and 18-20 ms; the launch call covers 5 µs of it, the copy call none (its copy ran later).
  EXPECT_EQ(f.idle_ns, 6 * kMs);
  EXPECT_EQ(Idle(f, HostCause::kLaunch), 5000u);
  EXPECT_EQ(Idle(f, HostCause::kCopy), 5000u);
  EXPECT_EQ(Idle(f, HostCause::kOutsideCuda), 6 * kMs - 10000);
}

TEST(RequestLedgerTest, ARequestIsNotFinalBeforeTheHorizonPassesItsEnd) {
  RequestLedger ledger;
  ledger.BeginScope(kThreadA, 10 * kMs, 7, false, "", {});
  ledger.Call(kThreadA, 11 * kMs, 11 * kMs + 10, 1, ApiCategory::kLaunch);
  ledger.EndScope(kThreadA, 10 * kMs, 20 * kMs, 7, false, "", {});
  EXPECT_TRUE(ledger.Finalize(20 * kMs - 1).empty());
  // Its kernel's record comes late, still before the horizon passes its end: counted.
  ledger.Work(1, 0, 7, 12 * kMs, 13 * kMs, WorkKind::kKernel);
  std::vector<RequestFigures> done = ledger.Finalize(20 * kMs);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_DOUBLE_EQ(done[0].gpu_ns, 1.0 * kMs);
  EXPECT_EQ(ledger.RouteName(done[0].route), "");
}

TEST(RequestLedgerTest, CallsOutsideEveryScopeAndOtherThreadsBelongToNoRequest) {
  RequestLedger ledger;
  ledger.Call(kThreadA, 1 * kMs, 2 * kMs, 1, ApiCategory::kLaunch);  // before the scope
  ledger.BeginScope(kThreadA, 10 * kMs, 7, false, "chat", {});
  ledger.Call(kThreadB, 11 * kMs, 12 * kMs, 2, ApiCategory::kLaunch);  // another thread, inside the span
  ledger.EndScope(kThreadA, 10 * kMs, 20 * kMs, 7, false, "chat", {});
  ledger.Call(kThreadA, 21 * kMs, 22 * kMs, 3, ApiCategory::kLaunch);  // after it
  ledger.Work(1, 0, 7, 11 * kMs, 12 * kMs, WorkKind::kKernel);
  ledger.Work(2, 0, 7, 12 * kMs, 13 * kMs, WorkKind::kKernel);
  ledger.Work(3, 0, 7, 14 * kMs, 15 * kMs, WorkKind::kKernel);
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_DOUBLE_EQ(done[0].gpu_ns, 0);
  EXPECT_EQ(done[0].kernels, 0u);
  EXPECT_EQ(done[0].first_launch, 0u);
  // Others' kernels kept the device busy 11-13 and 14-15 ms: not idle for this request either.
  EXPECT_EQ(done[0].idle_ns, 7 * kMs);
}

TEST(RequestLedgerTest, TheInnermostScopeOwnsACall) {
  RequestLedger ledger;
  ledger.BeginScope(kThreadA, 10 * kMs, 1, false, "outer", {});
  ledger.BeginScope(kThreadA, 12 * kMs, 2, false, "inner", {});
  ledger.Call(kThreadA, 13 * kMs, 13 * kMs + 10, 5, ApiCategory::kLaunch);
  ledger.EndScope(kThreadA, 12 * kMs, 14 * kMs, 2, false, "inner", {});
  ledger.Call(kThreadA, 15 * kMs, 15 * kMs + 10, 6, ApiCategory::kLaunch);
  ledger.EndScope(kThreadA, 10 * kMs, 20 * kMs, 1, false, "outer", {});
  ledger.Work(5, 0, 7, 13 * kMs, 14 * kMs, WorkKind::kKernel);
  ledger.Work(6, 0, 7, 16 * kMs, 18 * kMs, WorkKind::kKernel);
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].id, 2u);  // in the order of their ends
  EXPECT_DOUBLE_EQ(done[0].gpu_ns, 1.0 * kMs);
  EXPECT_EQ(done[1].id, 1u);
  EXPECT_DOUBLE_EQ(done[1].gpu_ns, 2.0 * kMs);
}

TEST(RequestLedgerTest, ABatchSharesItsKernelsEquallyAmongItsRequests) {
  RequestLedger ledger;
  // Three requests on their own threads; a worker thread runs them as one batch.
  const uint64_t members[] = {1, 2, 3};
  for (uint64_t id : members) ledger.BeginScope(1000 + id, 1 * kMs, id, false, "chat", {});
  ledger.BeginScope(kThreadA, 5 * kMs, 99, true, "", members);
  ledger.Call(kThreadA, 6 * kMs, 6 * kMs + 10, 1, ApiCategory::kLaunch);
  ledger.Call(kThreadA, 7 * kMs, 7 * kMs + 10, 2, ApiCategory::kLaunch);
  ledger.EndScope(kThreadA, 5 * kMs, 12 * kMs, 99, true, "", members);
  for (uint64_t id : members) ledger.EndScope(1000 + id, 1 * kMs, 13 * kMs, id, false, "chat", {});
  ledger.Work(1, 0, 7, 8 * kMs, 11 * kMs, WorkKind::kKernel);
  ledger.Work(2, 0, 7, 11 * kMs, 11 * kMs + 300000, WorkKind::kKernel);
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 3u);  // the batch itself is no request
  double total = 0;
  for (const RequestFigures& f : done) {
    EXPECT_NEAR(f.gpu_ns, 3.3 * kMs / 3, 1e-6);
    EXPECT_EQ(f.kernels, 2u);
    EXPECT_EQ(f.batches, 1u);
    EXPECT_EQ(f.first_queue_ns(), 2 * kMs);  // the batch's first launch at 6 ms, its first kernel at 8 ms
    EXPECT_EQ(f.queue_ns, 2 * kMs - 10);     // its launch returned at 6 ms + 10 ns; the second kernel followed the first
    total += f.gpu_ns;
  }
  EXPECT_NEAR(total, 3.3 * kMs, 1e-3);  // the shares add up to the batch's kernels
}

TEST(RequestLedgerTest, AGraphLaunchBringsEveryNodeOfTheGraph) {
  RequestLedger ledger;
  ledger.BeginScope(kThreadA, 0, 7, false, "chat", {});
  ledger.Call(kThreadA, 1 * kMs, 1 * kMs + 10, 42, ApiCategory::kLaunch);  // cudaGraphLaunch
  ledger.EndScope(kThreadA, 0, 10 * kMs, 7, false, "chat", {});
  for (int node = 0; node < 5; ++node) ledger.Work(42, 0, 7, (2 + node) * kMs, (3 + node) * kMs, WorkKind::kKernel);
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].kernels, 5u);
  EXPECT_DOUBLE_EQ(done[0].gpu_ns, 5.0 * kMs);
}

// Waiting behind other work anywhere in the request counts, not only before its first kernel.
TEST(RequestLedgerTest, EveryOperationsWaitCounts) {
  RequestLedger ledger;
  ledger.BeginScope(kThreadA, 0, 7, false, "chat", {});
  ledger.Call(kThreadA, 1 * kMs, 1 * kMs, 1, ApiCategory::kLaunch);
  ledger.Call(kThreadA, 1 * kMs, 1 * kMs, 2, ApiCategory::kLaunch);
  ledger.Call(kThreadA, 1 * kMs, 1 * kMs, 3, ApiCategory::kLaunch);
  ledger.EndScope(kThreadA, 0, 20 * kMs, 7, false, "chat", {});
  ledger.Work(1, 0, 7, 1 * kMs, 2 * kMs, WorkKind::kKernel);    // ran at once
  ledger.Work(2, 0, 7, 5 * kMs, 6 * kMs, WorkKind::kKernel);    // waited 2-5 ms behind others
  ledger.Work(3, 0, 8, 9 * kMs, 10 * kMs, WorkKind::kKernel);   // another stream: ready at 1 ms, waited 1-9
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].first_queue_ns(), 0u);
  EXPECT_EQ(done[0].queue_ns, 8 * kMs);  // the union of 2-5 and 1-9 ms
}

TEST(RequestLedgerTest, IdleIsSplitByWhatTheRequestsThreadWasDoing) {
  RequestLedger ledger;
  ledger.BeginScope(kThreadA, 0, 7, false, "chat", {});
  ledger.Call(kThreadA, 1 * kMs, 2 * kMs, 1, ApiCategory::kLaunch);
  ledger.Call(kThreadA, 4 * kMs, 9 * kMs, 0, ApiCategory::kSync);
  // A sync call overlapping a copy call: the sync explains the stretch first.
  ledger.Call(kThreadA, 8 * kMs, 10 * kMs, 2, ApiCategory::kCopy);
  ledger.EndScope(kThreadA, 0, 10 * kMs, 7, false, "chat", {});
  ledger.Work(1, 0, 7, 2 * kMs, 5 * kMs, WorkKind::kKernel);
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 1u);
  const RequestFigures& f = done[0];
  EXPECT_EQ(f.idle_ns, 7 * kMs);                       // 0-2 and 5-10 ms
  EXPECT_EQ(Idle(f, HostCause::kLaunch), 1 * kMs);      // 1-2
  EXPECT_EQ(Idle(f, HostCause::kSync), 4 * kMs);        // 5-9
  EXPECT_EQ(Idle(f, HostCause::kCopy), 1 * kMs);        // 9-10
  EXPECT_EQ(Idle(f, HostCause::kOutsideCuda), 1 * kMs); // 0-1
}

TEST(RequestLedgerTest, ScopesFromATraceMayComeInAnyOrder) {
  RequestLedger ledger;
  // Whole scopes (EndScope without a begin), the later one first.
  ledger.EndScope(kThreadA, 20 * kMs, 30 * kMs, 2, false, "chat", {});
  ledger.EndScope(kThreadA, 0, 10 * kMs, 1, false, "chat", {});
  ledger.Call(kThreadA, 5 * kMs, 5 * kMs + 10, 1, ApiCategory::kLaunch);
  ledger.Call(kThreadA, 25 * kMs, 25 * kMs + 10, 2, ApiCategory::kLaunch);
  ledger.Work(1, 0, 7, 6 * kMs, 7 * kMs, WorkKind::kKernel);
  ledger.Work(2, 0, 7, 26 * kMs, 28 * kMs, WorkKind::kKernel);
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].id, 1u);
  EXPECT_DOUBLE_EQ(done[0].gpu_ns, 1.0 * kMs);
  EXPECT_EQ(done[1].id, 2u);
  EXPECT_DOUBLE_EQ(done[1].gpu_ns, 2.0 * kMs);
}

TEST(RequestLedgerTest, RoutesPastTheCapAreOtherAndOpenScopesAreBounded) {
  RequestLedger::Options options;
  options.max_routes = 3;
  options.max_open_scopes = 4;
  RequestLedger ledger(options);
  const char* routes[] = {"a", "b", "c", "d", "e"};
  for (uint64_t i = 0; i < 5; ++i) ledger.BeginScope(i, i, i, false, routes[i], {});
  EXPECT_EQ(ledger.dropped_scopes(), 1u);  // a fifth open scope drops the oldest
  for (uint64_t i = 1; i < 5; ++i) ledger.EndScope(i, i, 100 + i, i, false, routes[i], {});
  std::vector<RequestFigures> done = ledger.FinalizeAll();
  ASSERT_EQ(done.size(), 4u);
  EXPECT_EQ(ledger.RouteName(done[0].route), "b");
  EXPECT_EQ(ledger.RouteName(done[1].route), "other");  // "c": two names and "other" fill the three
  EXPECT_EQ(ledger.RouteName(done[3].route), "other");
  EXPECT_EQ(ledger.route_count(), 3u);
}

TEST(RequestLedgerTest, AScopeNeverEndedIsUnfinishedNotARequest) {
  RequestLedger ledger;
  ledger.BeginScope(kThreadA, 0, 7, false, "chat", {});
  EXPECT_TRUE(ledger.FinalizeAll().empty());
  EXPECT_EQ(ledger.unfinished_scopes(), 1u);
}

}  // namespace
}  // namespace cuscope::requests
