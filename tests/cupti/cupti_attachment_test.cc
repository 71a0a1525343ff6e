// Detaching CUPTI between windows and attaching it again (cupti_attachment.h), with CUPTI faked:
// the detach happens inside a program call's exit callback and nowhere else, once, and what CUPTI
// forgets is set up again.
#include "lib/cupti/cupti_attachment.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/cupti/fake_cupti.h"

namespace cuscope::cupti {
namespace cupti_attachment_test {

using std::chrono::milliseconds;
using testing::FakeCupti;

const std::string kRuntimeOn = absl::StrCat("EnableDomain:", CUPTI_CB_DOMAIN_RUNTIME_API, ":1");
const std::string kRuntimeOff = absl::StrCat("EnableDomain:", CUPTI_CB_DOMAIN_RUNTIME_API, ":0");
constexpr FakeCupti::Call kLaunch{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000};
constexpr FakeCupti::Call kDriverLaunch{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel};
constexpr FakeCupti::Call kContextCreated{CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED};

void CUPTIAPI NoBuffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
}
void CUPTIAPI BufferDone(CUcontext, uint32_t, uint8_t*, size_t, size_t) {}

// A session as the attachment sees it: its callback hands call exits to the attachment and counts
// what reaches it; its set-up and standing callbacks count their calls.
class AttachmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CuptiAttachment::Hooks hooks;
    hooks.callback = OnCall;
    hooks.userdata = this;
    hooks.buffer_requested = NoBuffer;
    hooks.buffer_completed = BufferDone;
    hooks.set_up = [this](CUpti_SubscriberHandle subscriber) {
      ++set_ups_;
      if (fail_set_up_) return absl::InternalError("set-up failed (test)");
      return subscriber != nullptr ? absl::OkStatus() : absl::InternalError("no subscriber");
    };
    hooks.enable_callbacks = [this](CUpti_SubscriberHandle) {
      ++callbacks_enabled_;
      return absl::OkStatus();
    };
    ASSERT_TRUE(cupti_.Subscribe(OnCall, this, &subscriber_).ok());
    attachment_ = std::make_unique<CuptiAttachment>(cupti_, &subscriber_, std::move(hooks));
    cupti_.ClearCalls();
  }

  static void CUPTIAPI OnCall(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
    auto* self = static_cast<AttachmentTest*>(userdata);
    ++self->calls_seen_;
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    if (info->callbackSite == CUPTI_API_EXIT && self->attachment_->AtCallExit(domain)) ++self->carried_;
  }

  // The attachment as a session that may detach builds it: its calls pass `gate_`, and the detach
  // waits for `drain` (the writer's walk) first.
  void UseGate(std::function<bool()> drain) {
    CuptiAttachment::Hooks hooks;
    hooks.callback = OnCall;
    hooks.userdata = this;
    hooks.buffer_requested = NoBuffer;
    hooks.buffer_completed = BufferDone;
    hooks.set_up = [this](CUpti_SubscriberHandle) {
      ++set_ups_;
      // The session's set-up calls CUPTI through the gate: open by then.
      return gated_.EnableCallback(subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED);
    };
    hooks.drain = std::move(drain);
    attachment_ = std::make_unique<CuptiAttachment>(cupti_, &subscriber_, std::move(hooks), &gate_);
  }

  // Detach on a thread of its own, as the collector's thread does.
  std::future<AttachmentState> DetachAsync(milliseconds wait) {
    return std::async(std::launch::async, [this, wait] { return attachment_->Detach(wait); });
  }
  // Waits (bounded) until the detach is armed.
  bool WaitForState(AttachmentState want) {
    for (int i = 0; i < 2000 && attachment_->state() != want; ++i) std::this_thread::sleep_for(milliseconds(1));
    return attachment_->state() == want;
  }

  FakeCupti cupti_;
  CuptiGate gate_;
  GatedCuptiApi gated_{cupti_, gate_};
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::unique_ptr<CuptiAttachment> attachment_;
  std::atomic<int> calls_seen_{0}, carried_{0}, set_ups_{0}, callbacks_enabled_{0};
  std::atomic<bool> fail_set_up_{false};
};

TEST_F(AttachmentTest, AProgramCallsExitDetachesAfterAFlushAndTheNextWindowAttachesAgain) {
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  // Armed only once the runtime's call callbacks are on: no CUPTI call of the detaching thread
  // follows. The driver's stay as they were (a finalize nested in a runtime call: not measured).
  EXPECT_EQ(cupti_.Count(kRuntimeOn), 1u);
  EXPECT_EQ(cupti_.Count(absl::StrCat("EnableDomain:", CUPTI_CB_DOMAIN_DRIVER_API, ":1")), 0u);
  EXPECT_FALSE(attachment_->MayCallCupti());
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(detached.get(), AttachmentState::kDetached);
  EXPECT_EQ(carried_.load(), 1);
  // Flushed before arming; unsubscribed, then finalized, inside the call.
  const int flush = cupti_.FirstIndexOf("FlushAll:forced");
  ASSERT_GE(flush, 0);
  EXPECT_LT(flush, cupti_.FirstIndexOf(kRuntimeOn));
  EXPECT_LT(cupti_.FirstIndexOf(kRuntimeOn), cupti_.FirstIndexOf("Unsubscribe"));
  EXPECT_LT(cupti_.FirstIndexOf("Unsubscribe"), cupti_.FirstIndexOf("Finalize"));
  EXPECT_EQ(cupti_.Count("Finalize"), 1u);
  // Nothing after the finalize: a CUPTI call then would attach CUPTI again.
  EXPECT_EQ(cupti_.LastIndexOf("Finalize"), static_cast<int>(cupti_.Calls().size()) - 1);
  EXPECT_EQ(subscriber_, nullptr);
  EXPECT_FALSE(attachment_->MayCallCupti());
  EXPECT_EQ(attachment_->figures().detaches, 1u);

  // Detached: the program's calls reach no callback of ours.
  const int seen = calls_seen_.load();
  cupti_.CallApi(2, kLaunch);
  EXPECT_EQ(calls_seen_.load(), seen);

  cupti_.ClearCalls();
  ASSERT_TRUE(attachment_->Attach().ok());
  EXPECT_EQ(attachment_->state(), AttachmentState::kAttached);
  EXPECT_TRUE(attachment_->MayCallCupti());
  EXPECT_EQ(cupti_.Calls(), (std::vector<std::string>{"RegisterBufferCallbacks", "Subscribe"}));
  EXPECT_NE(subscriber_, nullptr);
  EXPECT_EQ(set_ups_.load(), 1);
  EXPECT_EQ(attachment_->figures().attaches, 1u);
  cupti_.CallApi(3, kLaunch);
  EXPECT_EQ(calls_seen_.load(), seen + 2);  // its entry and exit reach us again
  EXPECT_EQ(carried_.load(), 1);            // and carry no detach: none is armed
}

TEST_F(AttachmentTest, OnlyARuntimeCallsExitCarriesTheDetach) {
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  cupti_.CallApi(1, kContextCreated);  // a resource callback: not a call CUPTI may finalize in
  cupti_.CallApi(1, kDriverLaunch);    // a driver call (maybe inside a runtime call): not measured
  EXPECT_EQ(attachment_->state(), AttachmentState::kArmed);
  EXPECT_EQ(cupti_.Count("Finalize"), 0u);
  cupti_.CallApi(2, kLaunch);
  ASSERT_EQ(detached.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(detached.get(), AttachmentState::kDetached);
}

TEST_F(AttachmentTest, ManyThreadsCallsFinalizeOnce) {
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([this, t] {
      for (uint32_t i = 0; i < 200; ++i) cupti_.CallApi(static_cast<uint32_t>(t) * 1000 + i, kLaunch);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(detached.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(detached.get(), AttachmentState::kDetached);
  EXPECT_EQ(cupti_.Count("Finalize"), 1u);
  EXPECT_EQ(carried_.load(), 1);
}

// A program busy in its own code makes no call: the wait ends, CUPTI stays, and its call callbacks
// are as before the detach (the domains off, the session's standing callbacks on).
TEST_F(AttachmentTest, NoCallWithinTheWaitGivesTheDetachUp) {
  const auto began = std::chrono::steady_clock::now();
  EXPECT_EQ(attachment_->Detach(milliseconds(50)), AttachmentState::kAttached);
  EXPECT_GE(std::chrono::steady_clock::now() - began, milliseconds(50));
  EXPECT_EQ(attachment_->figures().given_up, 1u);
  EXPECT_GT(cupti_.LastIndexOf(kRuntimeOff), cupti_.LastIndexOf(kRuntimeOn));
  EXPECT_EQ(callbacks_enabled_.load(), 1);
  cupti_.CallApi(1, kLaunch);  // after the give-up a call carries nothing
  EXPECT_EQ(carried_.load(), 0);
  EXPECT_EQ(cupti_.Count("Finalize"), 0u);
  EXPECT_TRUE(attachment_->MayCallCupti());
  EXPECT_FALSE(attachment_->Attach().ok());  // attached: nothing to attach
}

// A trace window or GPU counters asked for while the detach waits: the detach ends at once.
TEST_F(AttachmentTest, APinWhileArmedEndsTheWaitAndCuptiStaysForGood) {
  auto detached = DetachAsync(milliseconds(10000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  EXPECT_TRUE(attachment_->Pin());
  ASSERT_EQ(detached.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(detached.get(), AttachmentState::kPinned);
  EXPECT_GT(cupti_.LastIndexOf(kRuntimeOff), cupti_.LastIndexOf(kRuntimeOn));
  cupti_.CallApi(1, kLaunch);
  EXPECT_EQ(cupti_.Count("Finalize"), 0u);
  cupti_.ClearCalls();
  EXPECT_EQ(attachment_->Detach(milliseconds(10)), AttachmentState::kPinned);
  EXPECT_TRUE(cupti_.Calls().empty());  // pinned: not even the flush
}

TEST_F(AttachmentTest, APinWhileDetachedWaitsForTheAttach) {
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.get(), AttachmentState::kDetached);
  EXPECT_FALSE(attachment_->Pin());
  ASSERT_TRUE(attachment_->Attach().ok());
  EXPECT_TRUE(attachment_->Pin());
  EXPECT_EQ(attachment_->state(), AttachmentState::kPinned);
}

TEST_F(AttachmentTest, AFailedFinalizeLeavesNoCuptiCallAllowed) {
  cupti_.Fail("Finalize");
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(detached.get(), AttachmentState::kFailed);
  EXPECT_FALSE(attachment_->MayCallCupti());
  EXPECT_EQ(attachment_->figures().detaches, 0u);
  EXPECT_FALSE(attachment_->Attach().ok());
  EXPECT_FALSE(attachment_->End());  // nothing of CUPTI's to end
}

TEST_F(AttachmentTest, AFailedAttachLeavesNoCuptiCallAllowed) {
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.get(), AttachmentState::kDetached);
  cupti_.Fail("Subscribe");  // another tool took CUPTI while we were away
  const absl::Status attached = attachment_->Attach();
  EXPECT_FALSE(attached.ok());
  EXPECT_EQ(attachment_->state(), AttachmentState::kFailed);
  EXPECT_FALSE(attachment_->MayCallCupti());
  EXPECT_EQ(set_ups_.load(), 0);
}

// Subscribed, then the session's set-up failed: the subscriber goes, so that no callback reaches a
// session that will record nothing more.
TEST_F(AttachmentTest, AnAttachFailingAfterSubscribingLeavesNoSubscriber) {
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.get(), AttachmentState::kDetached);
  cupti_.ClearCalls();
  fail_set_up_ = true;
  EXPECT_FALSE(attachment_->Attach().ok());
  EXPECT_EQ(attachment_->state(), AttachmentState::kFailed);
  EXPECT_EQ(cupti_.Calls(), (std::vector<std::string>{"RegisterBufferCallbacks", "Subscribe", "Unsubscribe"}));
  EXPECT_EQ(subscriber_, nullptr);
  const int seen = calls_seen_.load();
  cupti_.CallApi(2, kLaunch);
  EXPECT_EQ(calls_seen_.load(), seen);
}

TEST_F(AttachmentTest, TheEndSaysWhetherCuptiIsStillAttached) {
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.get(), AttachmentState::kDetached);
  EXPECT_FALSE(attachment_->End());  // detached: no flush, no unsubscribe
  EXPECT_EQ(attachment_->state(), AttachmentState::kEnded);
  EXPECT_FALSE(attachment_->Attach().ok());  // a window racing the end attaches nothing
}

TEST_F(AttachmentTest, TheEndWhileArmedEndsTheWait) {
  auto detached = DetachAsync(milliseconds(10000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  EXPECT_TRUE(attachment_->End());  // still attached: the end flushes and unsubscribes
  ASSERT_EQ(detached.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(detached.get(), AttachmentState::kEnded);
  cupti_.CallApi(1, kLaunch);
  EXPECT_EQ(cupti_.Count("Finalize"), 0u);
}

// With the session's gate: from the arming to the attach the session's own calls are refused
// without reaching CUPTI, and the attach's set-up finds the gate open.
TEST_F(AttachmentTest, WithAGateTheSessionsCallsStayOutFromTheArmingToTheAttach) {
  std::atomic<int> drains{0};
  UseGate([&] {
    ++drains;
    return true;
  });
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  EXPECT_EQ(drains.load(), 1);
  EXPECT_FALSE(gate_.is_open());
  EXPECT_EQ(gated_.FlushAll(false).code(), absl::StatusCode::kFailedPrecondition);
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.get(), AttachmentState::kDetached);
  EXPECT_FALSE(gate_.is_open());
  (void)gated_.Timestamp();
  (void)gated_.CallbackName(v1::API_DOMAIN_RUNTIME, 1);
  EXPECT_EQ(gated_.EnableActivity(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(cupti_.Count("FlushAll"), 0u);
  ASSERT_TRUE(attachment_->Attach().ok());
  EXPECT_TRUE(gate_.is_open());
  EXPECT_EQ(set_ups_.load(), 1);
  EXPECT_EQ(cupti_.Count(absl::StrCat("EnableCallback:", CUPTI_CB_DOMAIN_RESOURCE, ":",
                                      CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)),
            1u);
  EXPECT_TRUE(gated_.FlushAll(false).ok());
  EXPECT_EQ(cupti_.calls_while_detached(), 0u) << cupti_.first_call_while_detached();
}

// The writer still walking buffers (a walk calls CUPTI): the detach is left for the next window,
// nothing armed, the gate open.
TEST_F(AttachmentTest, AWriterNotDoneInTimeLeavesTheDetachForTheNextWindow) {
  UseGate([] { return false; });
  EXPECT_EQ(attachment_->Detach(milliseconds(5000)), AttachmentState::kAttached);
  EXPECT_EQ(cupti_.Count(kRuntimeOn), 0u);
  EXPECT_TRUE(gate_.is_open());
  EXPECT_EQ(attachment_->figures().given_up, 1u);
  cupti_.CallApi(1, kLaunch);
  EXPECT_EQ(cupti_.Count("Finalize"), 0u);
}

// A call of the session's still inside CUPTI past the wait: no arming either.
TEST_F(AttachmentTest, ASessionCallInFlightPastTheWaitLeavesTheDetachForTheNextWindow) {
  UseGate(nullptr);
  ASSERT_TRUE(gate_.Enter());
  EXPECT_EQ(attachment_->Detach(milliseconds(30)), AttachmentState::kAttached);
  gate_.Leave();
  EXPECT_EQ(cupti_.Count(kRuntimeOn), 0u);
  EXPECT_TRUE(gate_.is_open());
}

// No program call within the wait: CUPTI stays, and so do the session's calls.
TEST_F(AttachmentTest, ADetachGivenUpOpensTheGateAgain) {
  UseGate(nullptr);
  EXPECT_EQ(attachment_->Detach(milliseconds(30)), AttachmentState::kAttached);
  EXPECT_TRUE(gate_.is_open());
  EXPECT_TRUE(gated_.FlushAll(false).ok());
}

// An attach failing in the session's set-up: the gate closes again and stays closed.
TEST_F(AttachmentTest, AFailedAttachLeavesTheGateClosed) {
  UseGate(nullptr);
  auto detached = DetachAsync(milliseconds(5000));
  ASSERT_TRUE(WaitForState(AttachmentState::kArmed));
  cupti_.CallApi(1, kLaunch);
  ASSERT_EQ(detached.get(), AttachmentState::kDetached);
  cupti_.Fail(absl::StrCat("EnableCallback:", CUPTI_CB_DOMAIN_RESOURCE, ":", CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED));
  EXPECT_FALSE(attachment_->Attach().ok());
  EXPECT_EQ(attachment_->state(), AttachmentState::kFailed);
  EXPECT_FALSE(gate_.is_open());
  EXPECT_EQ(subscriber_, nullptr);
}

}  // namespace cupti_attachment_test
}  // namespace cuscope::cupti
