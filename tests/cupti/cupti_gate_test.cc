// The gate that keeps the session's own CUPTI calls out while CUPTI is detached (cupti_gate.h):
// a closed gate refuses every call without reaching CUPTI, a close waits for the calls in flight,
// and what a refused call answers stays usable (CUPTI's clock, names read before).
#include "lib/cupti/cupti_gate.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/records.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace cupti_gate_test {

using std::chrono::milliseconds;
using testing::FakeCupti;

const std::string kKernelOn = "EnableActivity:" + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

class GateTest : public ::testing::Test {
 protected:
  FakeCupti cupti_;
  CuptiGate gate_;
  GatedCuptiApi gated_{cupti_, gate_};
};

TEST_F(GateTest, AnOpenGatePassesCallsAndAClosedOneRefusesThemWithoutCupti) {
  ASSERT_TRUE(gated_.EnableActivity(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).ok());
  EXPECT_EQ(cupti_.Count(kKernelOn), 1u);
  ASSERT_TRUE(gate_.Close(milliseconds(1000)));
  EXPECT_FALSE(gate_.is_open());
  const absl::Status refused = gated_.EnableActivity(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("detached"), std::string::npos) << refused.message();
  EXPECT_EQ(gated_.FlushAll(/*forced=*/true).code(), absl::StatusCode::kFailedPrecondition);
  gated_.DisableActivity(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  EXPECT_EQ(gated_.StreamId(nullptr, nullptr, false), core::kNoStream);
  EXPECT_EQ(cupti_.Count(kKernelOn), 1u);
  EXPECT_EQ(cupti_.Count("FlushAll:forced"), 0u);
  EXPECT_EQ(cupti_.Count("DisableActivity:" + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)), 0u);
  EXPECT_EQ(gate_.refused(), 4u);
  gate_.Open();
  ASSERT_TRUE(gated_.EnableActivity(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).ok());
  EXPECT_EQ(cupti_.Count(kKernelOn), 2u);
  EXPECT_EQ(gate_.refused(), 4u);
}

TEST_F(GateTest, ACloseWaitsForTheCallsInFlight) {
  ASSERT_TRUE(gate_.Enter());  // a call inside CUPTI
  auto closed = std::async(std::launch::async, [this] { return gate_.Close(milliseconds(5000)); });
  EXPECT_EQ(closed.wait_for(milliseconds(100)), std::future_status::timeout);
  EXPECT_FALSE(gate_.Enter());  // no new call passes while the close waits
  gate_.Leave();
  ASSERT_EQ(closed.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(closed.get());
  EXPECT_FALSE(gate_.Enter());
}

TEST_F(GateTest, ACallStillInFlightPastTheWaitLeavesTheGateOpen) {
  ASSERT_TRUE(gate_.Enter());
  EXPECT_FALSE(gate_.Close(milliseconds(20)));
  EXPECT_TRUE(gate_.is_open());
  gate_.Leave();
  ASSERT_TRUE(gate_.Enter());
  gate_.Leave();
  EXPECT_TRUE(gate_.Close(milliseconds(20)));  // and closes once nothing is in flight
}

TEST_F(GateTest, WhileClosedTheClockStaysOnCuptisClockWithoutCallingIt) {
  cupti_.AdvanceClock(7'000'000'000'000);  // CUPTI's clock far from the steady clock's
  const uint64_t before = gated_.Timestamp();
  ASSERT_TRUE(gate_.Close(milliseconds(1000)));
  const uint64_t raw_before = cupti_.Timestamp();
  std::this_thread::sleep_for(milliseconds(20));
  const uint64_t during = gated_.Timestamp();
  const uint64_t raw_after = cupti_.Timestamp();
  EXPECT_EQ(raw_after - raw_before, 1000u) << "a closed gate's clock read reached CUPTI";
  // The steady clock moved ~20 ms since the read that passed; the fake's barely: the refused read
  // is the passing one plus the steady clock's time since.
  EXPECT_GE(during, before + 20'000'000);
  EXPECT_LT(during, before + 20'000'000'000ull);
  const uint64_t later = gated_.Timestamp();
  EXPECT_GE(later, during);
}

TEST_F(GateTest, ACallbacksNameReadWhileOpenIsKeptForWhenClosed) {
  EXPECT_EQ(gated_.CallbackName(v1::API_DOMAIN_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
            "cudaLaunchKernel_v7000");
  ASSERT_TRUE(gate_.Close(milliseconds(1000)));
  EXPECT_EQ(gated_.CallbackName(v1::API_DOMAIN_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
            "cudaLaunchKernel_v7000");
  // Never read: the placeholder CUPTI's own lookup gives an id it does not know.
  EXPECT_EQ(gated_.CallbackName(v1::API_DOMAIN_DRIVER, 12345), "driver_cbid_12345");
  EXPECT_EQ(gated_.Version(), 0u);  // never read while open either
}

// The collector's thread closes, finalizes, attaches and opens over and over while other threads
// call through the gate as the writer and the program's callbacks do: none of their calls reaches
// CUPTI between a finalize and the next attach.
TEST_F(GateTest, ManyThreadsCallsNeverReachCuptiWhileItIsDetached) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> passed{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      while (!stop.load()) {
        if (t % 2 == 0) {
          (void)gated_.Timestamp();
          (void)gated_.ContextId(nullptr);
        } else if (gated_.FlushAll(false).ok()) {
          passed.fetch_add(1);
        }
      }
    });
  }
  for (int cycle = 0; cycle < 200; ++cycle) {
    ASSERT_TRUE(gate_.Close(milliseconds(5000)));
    ASSERT_TRUE(cupti_.Finalize().ok());
    std::this_thread::yield();
    ASSERT_TRUE(cupti_.RegisterBufferCallbacks(nullptr, nullptr).ok());
    gate_.Open();
    std::this_thread::yield();
  }
  stop.store(true);
  for (auto& c : callers) c.join();
  EXPECT_EQ(cupti_.calls_while_detached(), 0u) << cupti_.first_call_while_detached();
  EXPECT_GT(passed.load(), 0u);
  EXPECT_GT(gate_.refused(), 0u);
}

}  // namespace cupti_gate_test
}  // namespace cuscope::cupti
