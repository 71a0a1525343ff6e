#include "lib/core/kernel_selection.h"

#include <pthread.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cuscope::core {
namespace {

// _Z8fma_loopPfi is fma_loop(float*, int); the template one is void ns::scale<float>(float*, int).
constexpr char kFma[] = "_Z8fma_loopPfi";
constexpr char kScale[] = "_ZN2ns5scaleIfEEvPT_i";
constexpr char kVecadd[] = "_Z6vecaddPKfS0_Pfm";

LaunchShape Shape(uint32_t grid, uint32_t block) {
  LaunchShape s;
  s.grid = {grid, 1, 1};
  s.block = {block, 1, 1};
  return s;
}

KernelSelector Make(KernelSelection sel) {
  auto s = KernelSelector::Create(sel);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(*s);
}

// Which of `launches` (name, grid) get profiled.
std::vector<int> Picked(KernelSelector& s, const std::vector<std::pair<const char*, uint32_t>>& launches) {
  std::vector<int> picked;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (s.Select(launches[i].first, Shape(launches[i].second, 256))) picked.push_back(static_cast<int>(i));
  }
  return picked;
}

TEST(DemangleTest, DemanglesAndFindsTheBaseName) {
  EXPECT_EQ(DemangleName(kFma), "fma_loop(float*, int)");
  EXPECT_EQ(DemangleName(kScale), "void ns::scale<float>(float*, int)");
  EXPECT_EQ(DemangleName("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(FunctionBaseName("void ns::scale<float>(float*, int)"), "ns::scale");
  EXPECT_EQ(FunctionBaseName("fma_loop(float*, int)"), "fma_loop");
  EXPECT_EQ(FunctionBaseName("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
                             "sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}>(int, float)"),
            "at::native::vectorized_elementwise_kernel");
  // A kernel in an unnamed namespace: the scope's parentheses are not the parameter list.
  EXPECT_EQ(FunctionBaseName("inference_server::(anonymous namespace)::BiasTanh(float*, float const*, int, unsigned long)"),
            "inference_server::(anonymous namespace)::BiasTanh");
  EXPECT_EQ(FunctionBaseName("void (anonymous namespace)::scale<float>(float*, int)"), "(anonymous namespace)::scale");
  // A parameter that is a function pointer, and a name without parameters.
  EXPECT_EQ(FunctionBaseName("void apply(void (*)(float), float*)"), "apply");
  EXPECT_EQ(FunctionBaseName("plain_c_kernel"), "plain_c_kernel");
}

TEST(KernelSelectorTest, DefaultProfilesEachDistinctKernelOnce) {
  KernelSelector s = Make({});
  // The second fma launch with a new grid is a distinct kernel; repeats are not.
  EXPECT_EQ(Picked(s, {{kFma, 8}, {kFma, 8}, {kVecadd, 8}, {kFma, 16}, {kVecadd, 8}}), (std::vector<int>{0, 2, 3}));
}

TEST(KernelSelectorTest, PerKernelCountZeroProfilesEveryLaunch) {
  KernelSelection sel;
  sel.per_kernel_count = 0;
  KernelSelector s = Make(sel);
  EXPECT_EQ(Picked(s, {{kFma, 8}, {kFma, 8}, {kFma, 8}}), (std::vector<int>{0, 1, 2}));
}

TEST(KernelSelectorTest, PerKernelCountKeepsTheFirstKOfEach) {
  KernelSelection sel;
  sel.per_kernel_count = 2;
  KernelSelector s = Make(sel);
  EXPECT_EQ(Picked(s, {{kFma, 8}, {kVecadd, 8}, {kFma, 8}, {kFma, 8}, {kVecadd, 8}, {kVecadd, 8}}),
            (std::vector<int>{0, 1, 2, 4}));
}

TEST(KernelSelectorTest, ExactNameMatchesMangledDemangledAndBaseNames) {
  for (const std::string name : {"fma_loop", "_Z8fma_loopPfi", "fma_loop(float*, int)"}) {
    KernelSelection sel;
    sel.kernel_name = name;
    KernelSelector s = Make(sel);
    EXPECT_EQ(Picked(s, {{kVecadd, 8}, {kFma, 8}, {kScale, 8}}), (std::vector<int>{1})) << name;
  }
  for (const std::string name : {"ns::scale", "scale"}) {
    KernelSelection sel;
    sel.kernel_name = name;
    KernelSelector s = Make(sel);
    EXPECT_EQ(Picked(s, {{kVecadd, 8}, {kFma, 8}, {kScale, 8}}), (std::vector<int>{2})) << name;
  }
}

TEST(KernelSelectorTest, ExactNameIsNotASubstringMatch) {
  KernelSelection sel;
  sel.kernel_name = "fma";
  KernelSelector s = Make(sel);
  EXPECT_TRUE(Picked(s, {{kFma, 8}, {kVecadd, 8}}).empty());
}

TEST(KernelSelectorTest, RegexSearchesMangledAndDemangledNames) {
  KernelSelection sel;
  sel.kernel_name = "regex:^void ns::";  // only the demangled form starts like this
  KernelSelector s = Make(sel);
  EXPECT_EQ(Picked(s, {{kFma, 8}, {kScale, 8}}), (std::vector<int>{1}));
  sel.kernel_name = "regex:loop|vecadd";
  KernelSelector t = Make(sel);
  EXPECT_EQ(Picked(t, {{kFma, 8}, {kScale, 8}, {kVecadd, 8}}), (std::vector<int>{0, 2}));
}

TEST(KernelSelectorTest, BadRegexIsAnErrorNamingIt) {
  KernelSelection sel;
  sel.kernel_name = "regex:fma(";
  auto s = KernelSelector::Create(sel);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("fma("), std::string::npos) << s.status();
}

// A pattern from the environment is compiled in the program's start-up: a huge or deeply nested one
// is refused with one message, never compiled on the program's stack.
TEST(KernelSelectorTest, HugeOrDeeplyNestedRegexIsRefusedNotCompiled) {
  KernelSelection sel;
  sel.kernel_name = "regex:" + std::string(90000, 'a');
  auto huge = KernelSelector::Create(sel);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("90000 characters"), std::string::npos) << huge.status();
  EXPECT_LT(huge.status().message().size(), 200u);  // the pattern is not echoed back
  sel.kernel_name = "regex:" + std::string(20000, '(') + "a" + std::string(20000, ')');
  EXPECT_FALSE(KernelSelector::Create(sel).ok());
  // At the limit, the deepest nesting that fits compiles.
  sel.kernel_name = "regex:" + std::string(kMaxRegexLength / 2, '(') + std::string(kMaxRegexLength / 2, ')');
  EXPECT_TRUE(KernelSelector::Create(sel).ok());
  sel.kernel_name = "regex:" + std::string(kMaxRegexLength + 1, 'a');
  EXPECT_FALSE(KernelSelector::Create(sel).ok());
}

struct MatchOnSmallStack {
  KernelSelector* selector;
  std::string name;
  bool selected = false;
};

// The launch callback runs on the program's threads, whose stacks may be small: a long kernel
// name against a pattern that backtracking engines recurse (or explode) on is matched with a
// bounded stack, in linear time.
TEST(KernelSelectorTest, LongNameMatchesOnASmallThreadStack) {
  KernelSelection sel;
  sel.kernel_name = "regex:^(a|aa)*(a*)*c$";
  auto selector = KernelSelector::Create(sel);
  ASSERT_TRUE(selector.ok()) << selector.status();
  MatchOnSmallStack job{&*selector, std::string(4000, 'a') + "c"};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* j = static_cast<MatchOnSmallStack*>(arg);
                  j->selected = j->selector->Select(j->name, Shape(1, 32));
                  return nullptr;
                },
                &job),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_TRUE(job.selected);
  EXPECT_FALSE(selector->Select(std::string(4000, 'a') + "b", Shape(1, 32)));
}

TEST(KernelSelectorTest, LaunchSkipCountsOnlyMatchingLaunches) {
  KernelSelection sel;
  sel.kernel_name = "fma_loop";
  sel.launch_skip = 2;
  sel.per_kernel_count = 0;
  KernelSelector s = Make(sel);
  // Launches 1 and 3 are the first two fma launches, skipped; vecadd launches do not count.
  EXPECT_EQ(Picked(s, {{kVecadd, 8}, {kFma, 8}, {kVecadd, 8}, {kFma, 8}, {kFma, 8}, {kFma, 8}}),
            (std::vector<int>{4, 5}));
  EXPECT_EQ(s.matched(), 4u);
}

TEST(KernelSelectorTest, LaunchCountStopsSelectionAtItsEdge) {
  KernelSelection sel;
  sel.per_kernel_count = 0;
  sel.launch_count = 3;
  KernelSelector s = Make(sel);
  EXPECT_EQ(Picked(s, {{kFma, 8}, {kFma, 8}}), (std::vector<int>{0, 1}));
  EXPECT_FALSE(s.Exhausted());  // 2 of 3
  EXPECT_TRUE(s.Select(kFma, Shape(8, 256)));
  EXPECT_TRUE(s.Exhausted());  // 3 of 3
  EXPECT_FALSE(s.Select(kFma, Shape(8, 256)));
  EXPECT_EQ(s.profiled(), 3u);
}

TEST(KernelSelectorTest, SkipThenCountThenPerKernelCombine) {
  KernelSelection sel;
  sel.launch_skip = 1;
  sel.launch_count = 2;
  sel.per_kernel_count = 1;
  KernelSelector s = Make(sel);
  // 0 skipped; 1 fma profiled; 2 fma repeat refused; 3 vecadd profiled; then the count is reached.
  EXPECT_EQ(Picked(s, {{kFma, 8}, {kFma, 8}, {kFma, 8}, {kVecadd, 8}, {kScale, 8}}), (std::vector<int>{1, 3}));
}

}  // namespace
}  // namespace cuscope::core
