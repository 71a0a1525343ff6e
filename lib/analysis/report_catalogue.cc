#include "lib/analysis/report_catalogue.h"

#include "lib/analysis/gpu_counters.h"
#include "lib/analysis/monitor_summary.h"
#include "lib/analysis/nccl_summary.h"
#include "lib/analysis/requests.h"
#include "lib/analysis/tables.h"

namespace cuscope::analysis {
namespace {

struct ReportEntry {
  std::string_view name;
  Table (*build)(const Timeline& timeline);
};

// Every report, in the order they are documented: the one place that says which exist.
constexpr ReportEntry kReports[] = {
    {"cuda_gpu_kern_sum", KernelSummary},
    {"cuda_gpu_kern_gb_sum", KernelGridBlockSummary},
    {"cuda_kern_stack_sum", KernelStackSummary},
    {"cuda_api_sum", ApiSummary},
    {"nvtx_sum", NvtxSummary},
    {"nvtx_gpu_proj_sum", NvtxGpuProjectionSummary},
    {"cuda_gpu_mem_time_sum", MemoryTimeSummary},
    {"cuda_gpu_mem_size_sum", MemorySizeSummary},
    {"cuda_kern_exec_sum", KernelExecutionSummary},
    {"nccl_sum", NcclSummary},
    {"req_sum", RequestSummary},
    {"req_rows", RequestRows},
    // With the default thresholds: `stats` takes no threshold overrides.
    {"kern_metrics", [](const Timeline& timeline) { return KernelMetricsSummary(timeline); }},
    {"gpu_metrics", GpuMetricsSummary},
    {"monitor_sum", MonitorSummaryTable},
    {"monitor_kern_sum", MonitorKernelTable},
    {"monitor_req_sum", MonitorRequestTable},
};

}  // namespace

const std::vector<std::string_view>& ReportNames() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const ReportEntry& report : kReports) names.push_back(report.name);
    return names;
  }();
  return kNames;
}

std::optional<Table> BuildReport(std::string_view name, const Timeline& timeline) {
  for (const ReportEntry& report : kReports) {
    if (report.name == name) return report.build(timeline);
  }
  return std::nullopt;
}

}  // namespace cuscope::analysis
