#include "lib/core/metric_sets.h"

#include <algorithm>
#include <string>

#include "gtest/gtest.h"

namespace cuscope::core {
namespace {

bool Has(const std::vector<std::string>& v, std::string_view name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

TEST(MetricSets, EveryDocumentedSetHasItsKeyMetrics) {
  for (const std::string& set : MetricSetNames()) EXPECT_FALSE(MetricSet(set).empty()) << set;
  EXPECT_TRUE(Has(MetricSet("sol"), metric::kSmThroughputPct));
  EXPECT_TRUE(Has(MetricSet("sol"), metric::kDramThroughputPct));
  EXPECT_TRUE(Has(MetricSet("sol"), metric::kL2ThroughputPct));
  EXPECT_TRUE(Has(MetricSet("occupancy"), metric::kAchievedOccupancyPct));
  EXPECT_TRUE(Has(MetricSet("stalls"), "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"));
  EXPECT_TRUE(Has(MetricSet("roofline"), metric::kDramBytes));
  EXPECT_TRUE(MetricSet("speed-of-light").empty());
}

TEST(MetricSets, ListsMixSetsAndNamesWithoutDuplicates) {
  auto m = ExpandMetricList("sol, dram__bytes_read.sum,roofline");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->front(), metric::kDuration);
  EXPECT_EQ(std::count(m->begin(), m->end(), std::string(metric::kDuration)), 1);  // in sol and roofline
  EXPECT_TRUE(Has(*m, "dram__bytes_read.sum"));
  EXPECT_EQ(m->size(), MetricSet("sol").size() + 1 + MetricSet("roofline").size() - 1);
}

TEST(MetricSets, BadEntriesAreNamed) {
  auto typo = ExpandMetricList("sol,occupancyy");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("\"occupancyy\""), std::string::npos) << typo.status();
  EXPECT_FALSE(ExpandMetricList("sol,,stalls").ok());
  EXPECT_FALSE(ExpandMetricList("").ok());
  EXPECT_FALSE(ExpandMetricList("SM__throughput.avg").ok());
  EXPECT_FALSE(ExpandMetricList("sm__throughput.").ok());
  EXPECT_TRUE(ExpandMetricList("sm__throughput.avg.pct_of_peak_sustained_elapsed").ok());
}

}  // namespace
}  // namespace cuscope::core
