#include "lib/analysis/rules/registry.h"

#include "lib/analysis/rules/rules.h"

namespace cuscope::analysis {
namespace {

constexpr FindingRule kFindingRules[] = {GpuIdleRule,    LaunchOverheadRule,  SyncPointsRule,    CopiesRule,
                                         StreamsRule,    CommunicationRule,   HotKernelsRule,    KernelInternalsRule,
                                         ThrottleRule,   MonitorIdleRule};

// How complete the trace is comes first, then what metric collection did to it.
constexpr WarningRule kWarningRules[] = {TraceHealthRule, MetricCollectionRule};

}  // namespace

std::span<const FindingRule> FindingRules() { return kFindingRules; }
std::span<const WarningRule> WarningRules() { return kWarningRules; }

}  // namespace cuscope::analysis
