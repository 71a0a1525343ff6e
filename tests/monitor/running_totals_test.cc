#include "lib/monitor/running_totals.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cuscope::monitor {
namespace {

KernelFigures Kernel(const std::string& name, uint32_t grid_x, uint64_t launches, uint64_t gpu_ns) {
  KernelFigures k;
  k.name = name;
  k.grid = {grid_x, 1, 1};
  k.block = {256, 1, 1};
  k.launches = launches;
  k.gpu_ns = gpu_ns;
  return k;
}

DeviceFigures Device(uint32_t id, uint64_t busy_ns, uint64_t idle_ns) {
  DeviceFigures d;
  d.device = id;
  d.busy_ns = busy_ns;
  d.idle_ns = idle_ns;
  d.idle_by_cause_ns[static_cast<int>(HostCause::kSync)] = idle_ns;
  return d;
}

// A mangled name per index: _Z7kernel0v ... ("kernel0()").
std::string Mangled(int i) {
  const std::string name = absl::StrCat("kernel", i);
  return absl::StrCat("_Z", name.size(), name, "v");
}

const KernelTotals* Row(const DeviceTotals& d, const std::string& label) {
  for (const KernelTotals& row : d.kernel_rows) {
    if (row.label == label) return &row;
  }
  return nullptr;
}

TEST(RunningTotalsTest, CountersGrowAcrossIntervalsAndGaugesTakeTheLatest) {
  RunningTotals totals;
  IntervalFigures first;
  first.devices.push_back(Device(0, 300, 700));
  first.devices[0].counters.push_back({"nvml.power_w", v1::COUNTER_SOURCE_UNKNOWN, 4, 250, 300});
  first.launch_calls = 5;
  first.sync_wait_ns = 40;
  IntervalFigures second;
  second.devices.push_back(Device(0, 900, 100));
  second.devices[0].counters.push_back({"nvml.power_w", v1::COUNTER_SOURCE_UNKNOWN, 4, 400, 450});
  second.launch_calls = 2;
  second.records_dropped_by_cupti = 3;
  totals.Add(first);
  totals.Add(second);

  ASSERT_EQ(totals.devices().size(), 1u);
  const DeviceTotals& d = totals.devices()[0];
  EXPECT_EQ(d.busy_ns, 1200u);
  EXPECT_EQ(d.idle_ns, 800u);
  EXPECT_EQ(d.idle_by_cause_ns[static_cast<int>(HostCause::kSync)], 800u);
  EXPECT_DOUBLE_EQ(d.utilization, 0.9);
  EXPECT_DOUBLE_EQ(d.counters.at("nvml.power_w").mean, 400);
  EXPECT_EQ(totals.intervals(), 2u);
  EXPECT_EQ(totals.launch_calls(), 7u);
  EXPECT_EQ(totals.sync_wait_ns(), 40u);
  EXPECT_EQ(totals.records_dropped_by_cupti(), 3u);
}

TEST(RunningTotalsTest, ACounterWithoutReadingsKeepsItsLastOne) {
  RunningTotals totals;
  IntervalFigures read;
  read.devices.push_back(Device(0, 0, 1000));
  read.devices[0].counters.push_back({"nvml.power_w", v1::COUNTER_SOURCE_UNKNOWN, 1, 120, 120});
  IntervalFigures unread;
  unread.devices.push_back(Device(0, 0, 1000));
  unread.devices[0].counters.push_back({"nvml.power_w", v1::COUNTER_SOURCE_UNKNOWN, 0, 0, 0});
  totals.Add(read);
  totals.Add(unread);
  EXPECT_DOUBLE_EQ(totals.devices()[0].counters.at("nvml.power_w").mean, 120);
}

TEST(RunningTotalsTest, DevicesAreKeptApartInIdOrder) {
  RunningTotals totals;
  IntervalFigures interval;
  interval.devices.push_back(Device(3, 10, 0));
  interval.devices.push_back(Device(1, 20, 0));
  interval.devices[0].top_kernels.push_back(Kernel(Mangled(0), 1, 1, 10));
  totals.Add(interval);
  ASSERT_EQ(totals.devices().size(), 2u);
  EXPECT_EQ(totals.devices()[0].device, 1u);
  EXPECT_EQ(totals.devices()[0].busy_ns, 20u);
  EXPECT_TRUE(totals.devices()[0].kernel_rows.empty());
  EXPECT_EQ(totals.devices()[1].device, 3u);
  EXPECT_EQ(totals.devices()[1].kernel_rows.size(), 1u);
}

TEST(RunningTotalsTest, KernelsAreLabelledByShortNameGridAndBlock) {
  RunningTotals totals;
  IntervalFigures interval;
  interval.devices.push_back(Device(0, 10, 0));
  // void ns::gemm<float>(float*, int), launched with two grids.
  interval.devices[0].top_kernels.push_back(Kernel("_ZN2ns4gemmIfEEvPfi", 128, 2, 50));
  interval.devices[0].top_kernels.push_back(Kernel("_ZN2ns4gemmIfEEvPfi", 64, 1, 20));
  interval.devices[0].top_kernels.push_back(Kernel("plain_c_kernel", 1, 1, 5));
  totals.Add(interval);
  const DeviceTotals& d = totals.devices()[0];
  ASSERT_EQ(d.kernel_rows.size(), 3u);
  EXPECT_EQ(d.kernel_rows[0].label, "ns::gemm");
  EXPECT_EQ(d.kernel_rows[0].grid, "128x1x1");
  EXPECT_EQ(d.kernel_rows[0].block, "256x1x1");
  EXPECT_EQ(d.kernel_rows[1].label, "ns::gemm");
  EXPECT_EQ(d.kernel_rows[1].grid, "64x1x1");
  EXPECT_EQ(d.kernel_rows[2].label, "plain_c_kernel");
}

TEST(RunningTotalsTest, LongNamesAreCut) {
  const std::string label = KernelLabel(std::string(500, 'k'));
  EXPECT_EQ(label.size(), kMaxKernelLabelLength);
  EXPECT_EQ(label.substr(label.size() - 3), "...");
  EXPECT_EQ(KernelLabel(std::string(kMaxKernelLabelLength, 'k')), std::string(kMaxKernelLabelLength, 'k'));
}

TEST(RunningTotalsTest, ExactlyTheCapGetsLabelsAndNothingGoesToOther) {
  RunningTotals totals(3);
  IntervalFigures interval;
  interval.devices.push_back(Device(0, 10, 0));
  for (int i = 0; i < 3; ++i) interval.devices[0].top_kernels.push_back(Kernel(Mangled(i), 1, 1, 10));
  totals.Add(interval);
  const DeviceTotals& d = totals.devices()[0];
  EXPECT_EQ(d.kernel_rows.size(), 3u);
  EXPECT_EQ(d.other_kernels.launches, 0u);
  EXPECT_EQ(d.other_kernels.gpu_ns, 0u);
}

TEST(RunningTotalsTest, PastTheCapKernelsGoToOtherWithTheAggregatorsOther) {
  RunningTotals totals(3);
  IntervalFigures interval;
  interval.devices.push_back(Device(0, 10, 0));
  for (int i = 0; i < 4; ++i) interval.devices[0].top_kernels.push_back(Kernel(Mangled(i), 1, i + 1, 100 * (i + 1)));
  interval.devices[0].other_kernels.launches = 7;
  interval.devices[0].other_kernels.gpu_ns = 70;
  totals.Add(interval);
  const DeviceTotals& d = totals.devices()[0];
  EXPECT_EQ(d.kernel_rows.size(), 3u);
  EXPECT_EQ(Row(d, "kernel3"), nullptr);
  EXPECT_EQ(d.other_kernels.label, "other");
  EXPECT_EQ(d.other_kernels.launches, 4u + 7u);
  EXPECT_EQ(d.other_kernels.gpu_ns, 400u + 70u);
}

// A kernel that has a label keeps it, even when it is no longer among the hottest, and a kernel
// that came too late stays in "other": every row's counters only grow.
TEST(RunningTotalsTest, LabelsStayOnceGiven) {
  RunningTotals totals(2);
  IntervalFigures first;
  first.devices.push_back(Device(0, 10, 0));
  first.devices[0].top_kernels = {Kernel(Mangled(0), 1, 1, 10), Kernel(Mangled(1), 1, 1, 10)};
  IntervalFigures second;
  second.devices.push_back(Device(0, 10, 0));
  second.devices[0].top_kernels = {Kernel(Mangled(2), 1, 5, 500), Kernel(Mangled(1), 1, 1, 10)};
  IntervalFigures third;
  third.devices.push_back(Device(0, 10, 0));
  third.devices[0].top_kernels = {Kernel(Mangled(0), 1, 1, 10), Kernel(Mangled(2), 1, 5, 500)};
  totals.Add(first);
  totals.Add(second);
  totals.Add(third);
  const DeviceTotals& d = totals.devices()[0];
  ASSERT_EQ(d.kernel_rows.size(), 2u);
  ASSERT_NE(Row(d, "kernel0"), nullptr);
  ASSERT_NE(Row(d, "kernel1"), nullptr);
  EXPECT_EQ(Row(d, "kernel0")->gpu_ns, 20u);
  EXPECT_EQ(Row(d, "kernel1")->launches, 2u);
  EXPECT_EQ(d.other_kernels.gpu_ns, 1000u);
}

TEST(RunningTotalsTest, TheCapIsPerDevice) {
  RunningTotals totals(1);
  IntervalFigures interval;
  interval.devices.push_back(Device(0, 10, 0));
  interval.devices.push_back(Device(1, 10, 0));
  interval.devices[0].top_kernels = {Kernel(Mangled(0), 1, 1, 10)};
  interval.devices[1].top_kernels = {Kernel(Mangled(1), 1, 1, 10)};
  totals.Add(interval);
  EXPECT_NE(Row(totals.devices()[0], "kernel0"), nullptr);
  EXPECT_NE(Row(totals.devices()[1], "kernel1"), nullptr);
}

TEST(RunningTotalsTest, CopiesAddUpByDirectionAndMemoryKinds) {
  RunningTotals totals;
  IntervalFigures interval;
  interval.devices.push_back(Device(0, 10, 0));
  interval.devices[0].copies.push_back({v1::COPY_KIND_HTOD, v1::MEMORY_KIND_PINNED, v1::MEMORY_KIND_DEVICE, 2, 2048, 30});
  interval.devices[0].copies.push_back({v1::COPY_KIND_DTOH, v1::MEMORY_KIND_DEVICE, v1::MEMORY_KIND_PAGEABLE, 1, 8, 5});
  totals.Add(interval);
  totals.Add(interval);
  const DeviceTotals& d = totals.devices()[0];
  ASSERT_EQ(d.copies.size(), 2u);
  EXPECT_EQ(d.copies[0].kind, v1::COPY_KIND_HTOD);
  EXPECT_EQ(d.copies[0].count, 4u);
  EXPECT_EQ(d.copies[0].bytes, 4096u);
  EXPECT_EQ(d.copies[1].gpu_ns, 10u);
}

}  // namespace
}  // namespace cuscope::monitor
