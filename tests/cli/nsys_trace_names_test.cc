#include "lib/cli/nsys_trace_names.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lib/cli/profile_options.h"

namespace cuscope::cli {
namespace {

TEST(NsysTraceNamesTest, NsysNamesBecomeTheKindsThatRecordTheSameThings) {
  absl::StatusOr<TraceKinds> t = TranslateTraceNames("cuda,nvtx,osrt,cublas");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kinds, "kernel,memcpy,memset,api,sync,memory,nvtx");
  // nvtx is a kind of cuscope's too: it needs no mapping.
  ASSERT_EQ(t->mapped.size(), 3u);
  EXPECT_EQ(t->mapped[0], "cuda: kernel,memcpy,memset,api,sync,memory");
  EXPECT_EQ(t->mapped[1], "osrt: not recorded (cuscope records no OS runtime calls)");
  EXPECT_EQ(t->mapped[2].rfind("cublas: not recorded (", 0), 0u) << t->mapped[2];
}

TEST(NsysTraceNamesTest, CuscopeKindsPassThroughUnchanged) {
  for (const char* list : {"kernel,memcpy", "all", "nvtx", "kernel,,nvtx"}) {
    absl::StatusOr<TraceKinds> t = TranslateTraceNames(list);
    ASSERT_TRUE(t.ok()) << list;
    EXPECT_EQ(t->kinds, list);
    EXPECT_TRUE(t->mapped.empty()) << list;
  }
}

TEST(NsysTraceNamesTest, AMixedListKeepsEachKindOnceInTheOrderGiven) {
  absl::StatusOr<TraceKinds> t = TranslateTraceNames("overhead,cuda,kernel");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kinds, "overhead,kernel,memcpy,memset,api,sync,memory");
  EXPECT_EQ(t->mapped.size(), 1u);
}

TEST(NsysTraceNamesTest, NsysNamesThatLeaveNothingAreAMistake) {
  for (const char* list : {"osrt", "none", "osrt,mpi"}) {
    absl::StatusOr<TraceKinds> t = TranslateTraceNames(list);
    ASSERT_FALSE(t.ok()) << list;
    EXPECT_NE(std::string(t.status().message()).find("cuda and nvtx"), std::string::npos) << t.status();
  }
}

TEST(NsysTraceNamesTest, ANameNeitherKnowsIsLeftForTheCollectorsCheck) {
  absl::StatusOr<TraceKinds> t = TranslateTraceNames("cuda,kernels");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kinds, "kernel,memcpy,memset,api,sync,memory,kernels");
  absl::StatusOr<ProfilePlan> plan = ParseProfileArgs({"-t", "cuda,kernels", "./app"});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(std::string(plan.status().message()).find("unknown activity kind 'kernels'"), std::string::npos)
      << plan.status();
}

TEST(NsysTraceNamesTest, ProfileSaysInOneLineWhatTheNsysNamesRecord) {
  absl::StatusOr<ProfilePlan> plan = ParseProfileArgs({"-t", "cuda,nvtx,osrt", "./app"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->env.at("CUSCOPE_KINDS"), "kernel,memcpy,memset,api,sync,memory,nvtx");
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_EQ(plan->notes[0],
            "-t cuda,nvtx,osrt in nsys's names records kernel,memcpy,memset,api,sync,memory,nvtx (cuda: "
            "kernel,memcpy,memset,api,sync,memory; osrt: not recorded (cuscope records no OS runtime calls))");
  absl::StatusOr<ProfilePlan> own = ParseProfileArgs({"--trace=kernel,nvtx", "./app"});
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE(own->notes.empty());
  EXPECT_EQ(own->env.at("CUSCOPE_KINDS"), "kernel,nvtx");
  EXPECT_FALSE(ParseProfileArgs({"-t", "osrt", "./app"}).ok());
}

}  // namespace
}  // namespace cuscope::cli
