#include "lib/core/hot_kernel_choice.h"

#include <gtest/gtest.h>

namespace cuscope::core {
namespace {

HotKernelChoice K(const std::string& name, uint32_t grid_x, uint64_t ns, uint64_t launches = 1, uint32_t block_x = 128) {
  HotKernelChoice k;
  k.name = name;
  k.shape.grid = {grid_x, 1, 1};
  k.shape.block = {block_x, 1, 1};
  k.total_ns = ns;
  k.launches = launches;
  return k;
}

std::vector<std::string> Names(const std::vector<HotKernelChoice>& ks) {
  std::vector<std::string> out;
  for (const auto& k : ks) out.push_back(k.name + "/" + std::to_string(k.shape.grid[0]));
  return out;
}

TEST(HotKernelsTest, HottestFirstAndOnlyN) {
  auto top = SelectHotKernels({K("a", 1, 100), K("b", 1, 300), K("c", 1, 200), K("d", 1, 50)}, 2);
  EXPECT_EQ(Names(top), (std::vector<std::string>{"b/1", "c/1"}));
}

TEST(HotKernelsTest, TotalsOfTheSameKernelAndShapeAreMerged) {
  // Two signatures of one kernel (e.g. different contexts) add up and overtake a single one.
  auto top = SelectHotKernels({K("gemm", 8, 150, 3), K("relu", 8, 250, 5), K("gemm", 8, 150, 2)}, 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].name, "gemm");
  EXPECT_EQ(top[0].total_ns, 300u);
  EXPECT_EQ(top[0].launches, 5u);
}

TEST(HotKernelsTest, KernelsDifferingOnlyInGridAreDistinct) {
  auto top = SelectHotKernels({K("gemm", 8, 200), K("gemm", 16, 300), K("gemm", 8, 50)}, 3);
  EXPECT_EQ(Names(top), (std::vector<std::string>{"gemm/16", "gemm/8"}));
  EXPECT_EQ(top[1].total_ns, 250u);
  EXPECT_TRUE(IsChosen(top, "gemm", top[1].shape));
  LaunchShape other = top[1].shape;
  other.block = {256, 1, 1};
  EXPECT_FALSE(IsChosen(top, "gemm", other));
}

TEST(HotKernelsTest, TiesGoToMoreLaunchesThenToTheName) {
  auto top = SelectHotKernels({K("zeta", 1, 100, 2), K("beta", 1, 100, 2), K("alpha", 1, 100, 1)}, 3);
  EXPECT_EQ(Names(top), (std::vector<std::string>{"beta/1", "zeta/1", "alpha/1"}));
  // The order of the input does not change the choice.
  auto again = SelectHotKernels({K("alpha", 1, 100, 1), K("zeta", 1, 100, 2), K("beta", 1, 100, 2)}, 3);
  EXPECT_EQ(Names(again), Names(top));
}

TEST(HotKernelsTest, KernelsWithoutTimeAreNeverChosen) {
  EXPECT_TRUE(SelectHotKernels({K("a", 1, 0, 4)}, 3).empty());
  EXPECT_TRUE(SelectHotKernels({}, 3).empty());
  EXPECT_TRUE(SelectHotKernels({K("a", 1, 10)}, 0).empty());
}

}  // namespace
}  // namespace cuscope::core
