#include "lib/core/kernel_names.h"

#include <string>

#include "gtest/gtest.h"

namespace cuscope::core {
namespace {

// Kernels of an H200 PyTorch trace, as CUPTI names them.
constexpr char kAdd[] = "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIN3c104HalfEEESt5arrayIPcLm3EEEEviT0_T1_";
constexpr char kGelu[] =
    "_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_"
    "8GeluTypeEENKUlvE0_clEvENKUlvE1_clEvEUlN3c104HalfEE_St5arrayIPcLm2EEEEviT0_T1_";
constexpr char kLayerNorm[] =
    "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_kernelIN3c104HalfEfL"
    "b0EEEviT0_PKT_S8_S8_PS5_S9_PS6_";

TEST(KernelNamesTest, BaseNamesOfPyTorchKernelsKeepInstantiationsApart) {
  EXPECT_EQ(KernelDisplayName(kAdd, KernelNameStyle::kBase), "vectorized_elementwise_kernel<8, CUDAFunctor_add, array>");
  // A lambda argument is named by the function that holds it.
  EXPECT_EQ(KernelDisplayName(kGelu, KernelNameStyle::kBase),
            "vectorized_elementwise_kernel<8, GeluCUDAKernelImpl, array>");
  // Anonymous namespaces and value arguments.
  EXPECT_EQ(KernelDisplayName(kLayerNorm, KernelNameStyle::kBase), "vectorized_layer_norm_kernel<Half, float, false>");
}

TEST(KernelNamesTest, PlainKernelsAndNonTemplatesAreTheFunctionNameAlone) {
  EXPECT_EQ(KernelDisplayName("_Z9known_bigPj", KernelNameStyle::kBase), "known_big");
  EXPECT_EQ(KernelDisplayName("_ZN7cutlass6KernelI18my_gemm_config_128EEvNT_6ParamsE", KernelNameStyle::kBase),
            "Kernel<my_gemm_config_128>");
  // Never mangled (C, Triton, cuBLAS's nvjet): as recorded.
  EXPECT_EQ(KernelDisplayName("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_TNT", KernelNameStyle::kBase),
            "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(KernelDisplayName("triton_poi_fused_add_0", KernelNameStyle::kDemangled), "triton_poi_fused_add_0");
}

TEST(KernelNamesTest, TemplateArgumentsPastFourAreElided) {
  EXPECT_EQ(KernelBaseName("void ns::k<int, float, double, char, bool>(int)"), "k<int, float, double, char, ...>");
  EXPECT_EQ(KernelBaseName("void ns::k<int, float, double, char>(int)"), "k<int, float, double, char>");
}

TEST(KernelNamesTest, DemangledAndMangledOnDemand) {
  EXPECT_EQ(KernelDisplayName("_Z9known_bigPj", KernelNameStyle::kDemangled), "known_big(unsigned int*)");
  EXPECT_EQ(KernelDisplayName(kAdd, KernelNameStyle::kMangled), kAdd);
  const std::string demangled = KernelDisplayName(kAdd, KernelNameStyle::kDemangled);
  EXPECT_EQ(demangled.rfind("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::Half>", 0), 0u)
      << demangled;
}

TEST(KernelNamesTest, ANameThatDoesNotDemangleIsShownAsRecorded) {
  EXPECT_EQ(KernelDisplayName("_Zgarbage", KernelNameStyle::kBase), "_Zgarbage");
  EXPECT_EQ(KernelDisplayName("_Z", KernelNameStyle::kDemangled), "_Z");
}

TEST(KernelNamesTest, NamesInsideTextAreRenamedWordByWord) {
  EXPECT_EQ(RenameKernelNamesIn("_Z9known_bigPj takes 40% of GPU time; then _Z9known_bigPj.", KernelNameStyle::kBase),
            "known_big takes 40% of GPU time; then known_big.");
  // "_Z" inside a word is not a name's start; mangled text is left alone.
  EXPECT_EQ(RenameKernelNamesIn("x_Z9known_bigPj", KernelNameStyle::kBase), "x_Z9known_bigPj");
  EXPECT_EQ(RenameKernelNamesIn("kernel: _Z9known_bigPj (3x)", KernelNameStyle::kMangled), "kernel: _Z9known_bigPj (3x)");
  EXPECT_EQ(RenameKernelNamesIn("kernel: _Z9known_bigPj (3x)", KernelNameStyle::kDemangled),
            "kernel: known_big(unsigned int*) (3x)");
}

TEST(KernelNamesTest, StyleNamesParseAndOthersAreRefused) {
  EXPECT_EQ(*ParseKernelNameStyle("base"), KernelNameStyle::kBase);
  EXPECT_EQ(*ParseKernelNameStyle("demangled"), KernelNameStyle::kDemangled);
  EXPECT_EQ(*ParseKernelNameStyle("mangled"), KernelNameStyle::kMangled);
  auto bad = ParseKernelNameStyle("short");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--kernel-names takes base, demangled or mangled, not 'short'");
}

}  // namespace
}  // namespace cuscope::core
