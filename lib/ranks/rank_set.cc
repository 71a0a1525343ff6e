#include "lib/ranks/rank_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/analysis/midpoint_median.h"

namespace cuscope::ranks {
namespace {

using analysis::Finding;
using analysis::FormatDuration;
using analysis::FormatPercent;
using analysis::MidpointMedian;

uint64_t Positive(double v) { return v > 0 ? static_cast<uint64_t>(std::llround(v)) : 0; }

std::string Dec(double v) { return absl::StrFormat("%.1f", v); }

// The order ranks are shown in, and ties broken by: by rank, those without one after them, as given.
// (Summaries arrive in whatever order the workers finish: nothing may depend on that.)
bool ShownBefore(const RankIdentity& x, const RankIdentity& y) {
  if ((x.rank < 0) != (y.rank < 0)) return y.rank < 0;
  return x.rank >= 0 ? x.rank < y.rank : x.index < y.index;
}

// What made a late rank late, from its summed excess over the others (per instance it was last).
std::string LateCause(const RankRow& r, uint64_t* excess_ns) {
  const double n = static_cast<double>(std::max<uint64_t>(r.last_arrivals, 1));
  const double compute = static_cast<double>(r.excess_compute_ns) / n;
  const double idle = static_cast<double>(r.excess_idle_ns) / n;
  const double copy = static_cast<double>(r.excess_copy_ns) / n;
  const double sync = static_cast<double>(r.excess_sync_ns) / n;
  if (compute >= idle && compute >= copy && compute > 0) {
    *excess_ns = Positive(compute);
    return absl::StrCat("more compute before the collective: +", FormatDuration(Positive(compute)),
                        " of kernels on its GPU each time");
  }
  if (idle >= copy && idle > 0) {
    *excess_ns = Positive(idle);
    std::string text = absl::StrCat("a host gap: its GPU sat idle ", FormatDuration(Positive(idle)),
                                    " longer before each collective");
    if (sync > 0.5 * idle) {
      absl::StrAppend(&text, ", ", FormatDuration(Positive(sync)), " of it while a host thread waited in a synchronization");
    } else {
      absl::StrAppend(&text, " while its host was busy elsewhere (outside CUDA, or launching late)");
    }
    return text;
  }
  if (copy > 0) {
    *excess_ns = Positive(copy);
    return absl::StrCat("an input copy: +", FormatDuration(Positive(copy)), " of copies before each collective");
  }
  *excess_ns = 0;
  return "nothing its trace shows before the collective (it reached the collective later on the host: a launch "
         "called late, or work outside CUDA)";
}

// One step found on every rank with steps: its median time, the rank with the most GPU work and its
// excess over the other ranks' median (with two ranks the median of all would sit halfway).
struct StepComparison {
  size_t index = 0;
  size_t ranks = 0;
  uint32_t slowest_row = 0;
  double median_duration = 0;
  double median_work = 0;
  double imbalance = 0;       // the slowest's work minus the others' median
  double excess_compute = 0;  // of it, compute
  double excess_copy = 0;     // of it, copies
};

// The steps of the rows whose step range is `name` (a rank that chose another range has other
// steps: they are not compared with these).
template <typename Cell>
std::vector<StepComparison> CompareSteps(const std::vector<std::vector<Cell>>& all_steps, const std::vector<RankRow>& rows,
                                         const std::string& name, size_t ranks_with_steps) {
  std::vector<StepComparison> out;
  if (ranks_with_steps < 2) return out;
  for (size_t i = 0; i < all_steps.size(); ++i) {
    std::vector<Cell> cells;
    for (const Cell& c : all_steps[i]) {
      if (rows[c.row].step_name == name) cells.push_back(c);
    }
    if (cells.size() != ranks_with_steps) continue;
    std::vector<double> work, compute, copy, duration;
    for (const Cell& c : cells) {
      work.push_back(static_cast<double>(c.work));
      compute.push_back(static_cast<double>(c.compute));
      copy.push_back(static_cast<double>(c.copy));
      duration.push_back(static_cast<double>(c.duration));
    }
    const auto slowest = std::max_element(cells.begin(), cells.end(), [&rows](const Cell& a, const Cell& b) {
      return a.work != b.work ? a.work < b.work : ShownBefore(rows[b.row].id, rows[a.row].id);
    });
    const auto at = slowest - cells.begin();
    const auto others = [at](std::vector<double> v) {
      v.erase(v.begin() + at);
      return MidpointMedian(std::move(v));
    };
    StepComparison c;
    c.index = i;
    c.ranks = cells.size();
    c.slowest_row = slowest->row;
    c.median_duration = MidpointMedian(duration);
    c.median_work = MidpointMedian(work);
    c.imbalance = static_cast<double>(slowest->work) - others(std::move(work));
    c.excess_compute = static_cast<double>(slowest->compute) - others(std::move(compute));
    c.excess_copy = static_cast<double>(slowest->copy) - others(std::move(copy));
    out.push_back(c);
  }
  return out;
}

// Per (key, collective): the skews of its matched instances, and who was late how often.
struct KeyStats {
  std::vector<double> skews;
  std::map<uint32_t, uint64_t> late;  // row -> instances
};
using KeyStatsMap = std::map<std::pair<uint32_t, analysis::Collective>, KeyStats>;

// What the instances matched on every rank add up to. Kept apart from the rows it charges, so that
// the findings and tables after it read one settled tally.
struct InstanceTally {
  KeyStatsMap by_key;
  uint64_t matched = 0;
  uint64_t unmatched = 0;
  double total_wait_ns = 0;
};

// Matches each collective instance across the `complete` ranks with collectives, and charges its late
// rank (in `rows`) with how late it was and what it did before. A template for the same reason as
// CompareSteps: the instances are the analyzer's private type.
template <typename Instances>
InstanceTally TallyInstances(const Instances& instances, uint32_t complete, double min_late,
                             std::vector<RankRow>& rows) {
  InstanceTally tally;
  for (const auto& [id, in] : instances) {
    if (complete < 2 || in.ranks != complete) {
      ++tally.unmatched;
      continue;
    }
    ++tally.matched;
    const double n = in.ranks;
    const double skew = static_cast<double>(in.max_offset - in.min_offset);
    tally.total_wait_ns += n * static_cast<double>(in.max_offset) - static_cast<double>(in.sum_offset);
    KeyStats& ks = tally.by_key[{static_cast<uint32_t>(id >> 32), in.collective}];
    ks.skews.push_back(skew);
    // Late: the last rank, by the threshold after the others' mean start, the earliest left out with
    // three ranks or more (one early rank makes a skew, not a late rank).
    const double others = n > 2 ? (static_cast<double>(in.sum_offset) - static_cast<double>(in.max_offset) -
                                   static_cast<double>(in.min_offset)) /
                                      (n - 2)
                                : static_cast<double>(in.min_offset);
    const double late_by = static_cast<double>(in.max_offset) - others;
    if (late_by < min_late) continue;
    ++ks.late[in.late_row];
    RankRow& late = rows[in.late_row];
    ++late.last_arrivals;
    late.late_ns += Positive(late_by);
    const auto excess = [&](uint64_t late_value, uint64_t sum_value) {
      return static_cast<int64_t>(static_cast<double>(late_value) -
                                  (static_cast<double>(sum_value) - static_cast<double>(late_value)) / (n - 1));
    };
    late.excess_compute_ns += excess(in.late_before.compute_ns, in.sum_before.compute_ns);
    late.excess_copy_ns += excess(in.late_before.copy_ns, in.sum_before.copy_ns);
    late.excess_idle_ns += excess(in.late_before.idle_ns, in.sum_before.idle_ns);
    late.excess_sync_ns += excess(in.late_before.sync_ns, in.sum_before.sync_ns);
  }
  return tally;
}

// ranks.straggler: the rank that starts the most matched collectives last, when it does so often
// enough for the others' waiting to be its doing rather than noise.
std::optional<Finding> StragglerFinding(const std::vector<RankRow>& rows, uint64_t matched_instances,
                                        uint32_t complete, double total_wait_ns, uint64_t span,
                                        const analysis::Thresholds& thresholds) {
  if (matched_instances == 0) return std::nullopt;
  const auto top = std::max_element(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) {
    return a.last_arrivals != b.last_arrivals ? a.last_arrivals < b.last_arrivals : ShownBefore(b.id, a.id);
  });
  const double share = static_cast<double>(top->last_arrivals) / static_cast<double>(matched_instances);
  if (!(top->last_arrivals > 0 && share >= thresholds.straggler_min_share)) return std::nullopt;
  Finding f;
  f.rule_id = "ranks.straggler";
  uint64_t excess = 0;
  const std::string cause = LateCause(*top, &excess);
  const uint64_t late_each = top->late_ns / top->last_arrivals;
  const uint64_t wait_per_rank = Positive(total_wait_ns / std::max<double>(complete, 1));
  f.headline = absl::StrFormat(
      "%s is the straggler: it starts %s of the %u collectives matched on all %u ranks last, %s after the other "
      "ranks' mean; they wait for it inside their NCCL kernels (%s per rank in all). Cause: %s",
      top->id.Label(), FormatPercent(share), matched_instances, complete, FormatDuration(late_each),
      FormatDuration(wait_per_rank), cause);
  f.Add("rank", top->id.rank, "count");
  f.Add("late_share", share, "ratio");
  f.Add("late_each_ns", static_cast<double>(late_each), "ns");
  f.Add("wait_per_rank_ns", static_cast<double>(wait_per_rank), "ns");
  f.Add("cause_excess_ns", static_cast<double>(excess), "ns");
  f.Add("excess_compute_ns", static_cast<double>(top->excess_compute_ns) / top->last_arrivals, "ns");
  f.Add("excess_idle_ns", static_cast<double>(top->excess_idle_ns) / top->last_arrivals, "ns");
  f.Add("excess_copy_ns", static_cast<double>(top->excess_copy_ns) / top->last_arrivals, "ns");
  for (const RankRow& r : rows) {
    if (r.last_arrivals > 0) f.offenders.push_back({"rank", r.id.Label(), r.last_arrivals, r.late_ns});
  }
  std::sort(f.offenders.begin(), f.offenders.end(),
            [](const analysis::Offender& a, const analysis::Offender& b) { return a.count > b.count; });
  f.recommendation =
      "balance the work: give the late rank less (a smaller shard, an even split of layers or sequence lengths), "
      "or take off what only it does before the collective (logging, checkpoints, data loading on rank 0); if it "
      "waits on the host, overlap its input pipeline with compute";
  f.recoverable_ns = wait_per_rank;
  f.severity = analysis::SeverityFor(wait_per_rank, span, thresholds);
  return f;
}

// The step range most ranks chose (empty when none chose one); when they differ, a warning names
// them all, since steps of different ranges cannot be compared.
std::string ChooseStepName(const std::map<std::string, uint32_t>& step_names, std::vector<std::string>* warnings) {
  if (step_names.empty()) return std::string();
  std::string chosen =
      std::max_element(step_names.begin(), step_names.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  if (step_names.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [name, count] : step_names) names.push_back(absl::StrCat("'", name, "' (", count, ")"));
    warnings->push_back(absl::StrCat("the ranks' step ranges differ: ", absl::StrJoin(names, ", "),
                                     "; name one with --step NAME"));
  }
  return chosen;
}

// ranks.step_imbalance: the rank most often slowest over the compared steps, when the median step's
// imbalance is a large enough share of the step to be worth evening out.
std::optional<Finding> StepImbalanceFinding(const std::vector<StepComparison>& steps, const std::vector<RankRow>& rows,
                                            size_t ranks_with_steps, const std::string& step_name,
                                            uint64_t matched_steps, uint64_t span,
                                            const analysis::Thresholds& thresholds) {
  std::vector<double> imbalances, shares, durations;
  std::map<uint32_t, uint64_t> slowest_count;
  std::map<uint32_t, std::pair<double, double>> slowest_excess;  // row -> (compute, copy) summed
  for (const StepComparison& c : steps) {
    imbalances.push_back(c.imbalance);
    durations.push_back(c.median_duration);
    shares.push_back(c.median_duration > 0 ? c.imbalance / c.median_duration : 0);
    ++slowest_count[c.slowest_row];
    auto& [dc, dp] = slowest_excess[c.slowest_row];
    dc += c.excess_compute;
    dp += c.excess_copy;
  }
  const double share = MidpointMedian(shares);
  if (!(matched_steps > 0 && share >= thresholds.step_imbalance_min_share)) return std::nullopt;
  const auto top = std::max_element(slowest_count.begin(), slowest_count.end(), [&rows](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : ShownBefore(rows[b.first].id, rows[a.first].id);
  });
  const RankRow& slow = rows[top->first];
  const double imbalance = MidpointMedian(imbalances);
  const double step = MidpointMedian(durations);
  const auto& [dc, dp] = slowest_excess[top->first];
  const double n = static_cast<double>(top->second);
  Finding f;
  f.rule_id = "ranks.step_imbalance";
  f.headline = absl::StrFormat(
      "steps imbalanced: %s is the slowest of %u ranks in %u of %u '%s' steps, with %s more GPU work per step "
      "than the other ranks' median (%s of the %s step): %s",
      slow.id.Label(), ranks_with_steps, top->second, matched_steps, step_name,
      FormatDuration(Positive(imbalance)), FormatPercent(share), FormatDuration(Positive(step)),
      dc >= dp ? absl::StrCat(FormatDuration(Positive(dc / n)), " more compute")
               : absl::StrCat(FormatDuration(Positive(dp / n)), " more copies"));
  f.Add("rank", slow.id.rank, "count");
  f.Add("imbalance_ns", imbalance, "ns");
  f.Add("imbalance_share", share, "ratio");
  f.Add("step_ns", step, "ns");
  f.Add("slowest_steps", static_cast<double>(top->second), "count");
  f.Add("excess_compute_ns", dc / n, "ns");
  f.Add("excess_copy_ns", dp / n, "ns");
  // Each rank that was the slowest in some steps, with its extra GPU work in them.
  for (const auto& [row, count] : slowest_count) {
    const auto& [row_compute, row_copy] = slowest_excess[row];
    f.offenders.push_back({"rank", rows[row].id.Label(), count, Positive(row_compute + row_copy)});
  }
  std::sort(f.offenders.begin(), f.offenders.end(),
            [](const analysis::Offender& a, const analysis::Offender& b) { return a.count > b.count; });
  f.recommendation =
      "every rank waits for the slowest at the step's collectives: even out the work per rank (batch sizes, "
      "sequence lengths, the layers of a pipeline stage, what only one rank does), then check again";
  f.recoverable_ns = Positive(imbalance * static_cast<double>(matched_steps));
  f.severity = analysis::SeverityFor(f.recoverable_ns, span, thresholds);
  return f;
}

// ranks.comm_exposed: the ranks' own comm.exposed, together, so that a set shows it once with the
// collective that cost the most rather than once per rank.
std::optional<Finding> CommExposedFinding(const std::vector<RankRow>& rows, uint64_t span,
                                          const analysis::Thresholds& thresholds) {
  std::vector<const RankRow*> exposed;
  std::map<std::string, uint64_t> by_collective;
  for (const RankRow& r : rows) {
    for (const Finding& f : r.findings) {
      if (f.rule_id != "comm.exposed") continue;
      exposed.push_back(&r);
      for (const analysis::Offender& o : f.offenders) by_collective[o.name] += o.time_ns;
      break;
    }
  }
  if (exposed.empty()) return std::nullopt;
  std::vector<double> ns, share;
  for (const RankRow* r : exposed) {
    ns.push_back(static_cast<double>(r->exposed_ns));
    share.push_back(r->active_ns ? static_cast<double>(r->exposed_ns) / static_cast<double>(r->active_ns) : 0);
  }
  const auto top = std::max_element(by_collective.begin(), by_collective.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  Finding f;
  f.rule_id = "ranks.comm_exposed";
  f.headline = absl::StrFormat(
      "communication not overlapped on %u of %u ranks: %s exposed per rank (median, %s of its active span); %s "
      "on the critical path",
      exposed.size(), rows.size(), FormatDuration(Positive(MidpointMedian(ns))), FormatPercent(MidpointMedian(share)),
      top == by_collective.end() ? std::string("NCCL") : top->first);
  f.Add("ranks", static_cast<double>(exposed.size()), "count");
  f.Add("exposed_ns_median", MidpointMedian(ns), "ns");
  f.Add("exposed_share_median", MidpointMedian(share), "ratio");
  for (const auto& [name, t] : by_collective) f.offenders.push_back({"collective", name, 0, t});
  std::sort(f.offenders.begin(), f.offenders.end(),
            [](const analysis::Offender& a, const analysis::Offender& b) { return a.time_ns > b.time_ns; });
  f.recommendation = exposed.front()->findings.front().recommendation;
  f.recoverable_ns = Positive(MidpointMedian(ns));
  f.severity = analysis::SeverityFor(f.recoverable_ns, span, thresholds);
  return f;
}

// Warnings about the set itself: traces that may not belong together, or that the comparison had to
// leave out, so that a reader knows what the figures do not cover.
void AddSetWarnings(const std::vector<RankRow>& rows, uint64_t unmatched, uint32_t complete,
                    std::vector<std::string>* warnings) {
  std::map<int32_t, std::vector<std::string>> by_rank;
  std::set<std::string> jobs, boots;
  std::set<int32_t> world_sizes;
  uint64_t unranked = 0, unaligned = 0;
  for (const RankRow& r : rows) {
    if (r.id.rank >= 0) by_rank[r.id.rank].push_back(r.id.path); else ++unranked;
    if (!r.id.job_id.empty()) jobs.insert(r.id.job_id);
    boots.insert(r.id.host + "/" + r.id.boot_id);
    if (r.id.world_size > 0) world_sizes.insert(r.id.world_size);
    if (!r.clock_aligned) ++unaligned;
    if (r.truncated) warnings->push_back(absl::StrCat(r.id.Label(), ": its trace is cut or damaged (", r.id.path, ")"));
  }
  if (unranked > 0) {
    warnings->push_back(absl::StrCat(unranked, " trace(s) name no rank (no launcher variables in the process): "
                                                "they are named by their position"));
  }
  for (const auto& [rank, paths] : by_rank) {
    if (paths.size() > 1) {
      const std::vector<std::string> shown(paths.begin(), paths.begin() + std::min<size_t>(paths.size(), 3));
      warnings->push_back(absl::StrCat("rank ", rank, " appears in ", paths.size(), " traces (",
                                       absl::StrJoin(shown, ", "), paths.size() > 3 ? ", ..." : "",
                                       "): are they of one run?"));
    }
  }
  if (jobs.size() > 1) warnings->push_back(absl::StrCat("the traces come from ", jobs.size(), " jobs: ", absl::StrJoin(jobs, ", ")));
  if (world_sizes.size() == 1 && *world_sizes.begin() != static_cast<int32_t>(rows.size())) {
    warnings->push_back(absl::StrCat("the job had ", *world_sizes.begin(), " ranks; ", rows.size(),
                                     " trace(s) given: the figures cover those"));
  }
  if (unaligned > 0 && boots.size() > 1) {
    warnings->push_back(absl::StrCat(unaligned, " trace(s) carry no clock reference (written before cuscope "
                                                "recorded one) and the traces come from several hosts or boots: "
                                                "arrival times across them are not comparable"));
  }
  if (unmatched > 0 && complete >= 2) {
    warnings->push_back(absl::StrCat(unmatched, " collective instance(s) were not found on every rank (a trace "
                                                "cut short, or collectives of a subset of the ranks): left out"));
  }
  if (complete > 0 && complete < rows.size()) {
    warnings->push_back(absl::StrCat(rows.size() - complete, " rank(s) ran no NCCL kernel: no arrival to compare"));
  }
}

// The rows' indices in the order ranks are shown (ShownBefore), stable so that ranks without a
// rank number keep the order they were given in.
std::vector<uint32_t> ShownOrder(const std::vector<RankRow>& rows) {
  std::vector<uint32_t> order(rows.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&rows](uint32_t a, uint32_t b) { return ShownBefore(rows[a].id, rows[b].id); });
  return order;
}

analysis::Table RanksTable(const std::vector<RankRow>& rows, const std::vector<uint32_t>& order,
                           uint64_t matched_instances) {
  analysis::Table ranks;
  ranks.name = "ranks";
  ranks.title = "each rank: kernel time, NCCL's time and how much of it overlapped compute, collectives it started last, "
                "and its steps";
  using analysis::ColumnType;
  ranks.columns = {{"Rank", ColumnType::kText},          {"Host", ColumnType::kText},
                   {"PID", ColumnType::kInteger},       {"Kernel Time (ns)", ColumnType::kInteger},
                   {"NCCL Time (ns)", ColumnType::kInteger}, {"NCCL (%)", ColumnType::kPercent},
                   {"Overlapped (%)", ColumnType::kPercent}, {"Exposed (ns)", ColumnType::kInteger},
                   {"Collectives", ColumnType::kInteger},    {"Last (%)", ColumnType::kPercent},
                   {"Late By Avg (ns)", ColumnType::kDecimal}, {"Steps", ColumnType::kInteger},
                   {"Step Med (ns)", ColumnType::kDecimal},   {"Step Work Med (ns)", ColumnType::kDecimal},
                   {"Trace", ColumnType::kText}};
  for (uint32_t i : order) {
    const RankRow& r = rows[i];
    const auto pct = [](uint64_t part, uint64_t whole) {
      return whole == 0 ? std::string() : Dec(100.0 * static_cast<double>(part) / static_cast<double>(whole));
    };
    ranks.rows.push_back(
        {r.id.rank >= 0 ? absl::StrCat(r.id.rank) : r.id.Label(), r.id.host, absl::StrCat(r.id.pid),
         absl::StrCat(r.kernel_ns), absl::StrCat(r.communication_ns), pct(r.communication_ns, r.kernel_ns),
         pct(r.overlapped_ns, r.communication_ns), absl::StrCat(r.exposed_ns), absl::StrCat(r.collectives),
         pct(r.last_arrivals, matched_instances),
         r.last_arrivals ? Dec(static_cast<double>(r.late_ns) / static_cast<double>(r.last_arrivals)) : "",
         absl::StrCat(r.steps), r.steps ? Dec(r.step_median_ns) : "", r.steps ? Dec(r.step_work_median_ns) : "",
         r.id.path});
  }
  return ranks;
}

// Takes `by_key` by reference to move each key's skews into its median rather than copy them.
analysis::Table CollectivesTable(KeyStatsMap& by_key, const std::vector<RankRow>& rows,
                                 const std::vector<std::string>& keys) {
  using analysis::ColumnType;
  analysis::Table collectives;
  collectives.name = "rank_collectives";
  collectives.title = "collectives matched on every rank, per communicator (or NCCL stream) and collective: the spread "
                      "of the ranks' kernel starts, and the rank most often last";
  collectives.columns = {{"Key", ColumnType::kText},           {"Collective", ColumnType::kText},
                         {"Instances", ColumnType::kInteger},  {"Skew Med (ns)", ColumnType::kDecimal},
                         {"Skew Max (ns)", ColumnType::kDecimal}, {"Most Often Last", ColumnType::kText},
                         {"Last (%)", ColumnType::kPercent}};
  for (auto& [key, ks] : by_key) {
    const double max_skew = *std::max_element(ks.skews.begin(), ks.skews.end());
    const size_t instances = ks.skews.size();
    const double median = MidpointMedian(std::move(ks.skews));
    std::string late;
    std::string late_share;
    if (!ks.late.empty()) {
      const auto top = std::max_element(ks.late.begin(), ks.late.end(), [&rows](const auto& a, const auto& b) {
        return a.second != b.second ? a.second < b.second : ShownBefore(rows[b.first].id, rows[a.first].id);
      });
      late = rows[top->first].id.Label();
      late_share = Dec(100.0 * static_cast<double>(top->second) / static_cast<double>(instances));
    }
    collectives.rows.push_back({keys[key.first], std::string(analysis::CollectiveName(key.second)),
                                absl::StrCat(instances), Dec(median), Dec(max_skew), late, late_share});
  }
  return collectives;
}

analysis::Table StepsTable(const std::vector<StepComparison>& steps, const std::vector<RankRow>& rows) {
  using analysis::ColumnType;
  analysis::Table step_table;
  step_table.name = "rank_steps";
  step_table.title = "steps found on every rank: the median step time, the rank with the most GPU work and its excess over "
                "the other ranks' median";
  step_table.columns = {{"Step", ColumnType::kInteger},          {"Ranks", ColumnType::kInteger},
                   {"Step Med (ns)", ColumnType::kDecimal}, {"Work Med (ns)", ColumnType::kDecimal},
                   {"Slowest", ColumnType::kText},          {"Imbalance (ns)", ColumnType::kDecimal},
                   {"Imbalance (%)", ColumnType::kPercent}};
  for (const StepComparison& c : steps) {
    step_table.rows.push_back({absl::StrCat(c.index), absl::StrCat(c.ranks), Dec(c.median_duration), Dec(c.median_work),
                               rows[c.slowest_row].id.Label(), Dec(c.imbalance),
                               c.median_duration > 0 ? Dec(100.0 * c.imbalance / c.median_duration) : ""});
  }
  return step_table;
}

}  // namespace

void RankSetAnalyzer::Add(const RankSummary& s) {
  RankRow row;
  row.id = s.id;
  row.clock_aligned = s.clock_aligned;
  row.truncated = s.truncated;
  row.active_ns = s.active_ns;
  row.kernel_ns = s.kernel_ns;
  row.communication_ns = s.communication_ns;
  row.overlapped_ns = s.overlapped_ns;
  row.exposed_ns = s.exposed_ns;
  row.nccl_calls = s.nccl_calls;
  row.nccl_calls_without_kernel = s.nccl_calls_without_kernel;
  row.collectives = s.collectives.size();
  row.findings = s.findings;
  std::vector<double> durations, work;
  for (const StepTiming& st : s.steps) {
    durations.push_back(static_cast<double>(st.duration()));
    work.push_back(static_cast<double>(st.work_ns()));
  }
  row.steps = s.steps.size();
  row.step_name = s.step_name;
  row.step_median_ns = MidpointMedian(durations);
  row.step_work_median_ns = MidpointMedian(std::move(work));

  std::lock_guard<std::mutex> lock(mu_);
  const auto row_index = static_cast<uint32_t>(rows_.size());
  if (!s.collectives.empty()) ++ranks_with_collectives_;
  std::vector<uint32_t> key_of(s.keys.size());
  for (size_t k = 0; k < s.keys.size(); ++k) {
    auto [it, added] = key_ids_.try_emplace(s.keys[k], static_cast<uint32_t>(keys_.size()));
    if (added) keys_.push_back(s.keys[k]);
    key_of[k] = it->second;
  }
  for (const CollectiveArrival& a : s.collectives) {
    Instance& in = instances_[(static_cast<uint64_t>(key_of[a.key]) << 32) | a.sequence];
    if (in.ranks == 0) {
      in.collective = a.collective;
      in.first_start = a.start;
      in.late_row = row_index;
      in.late_before = a.before;
    } else {
      // Offsets past about 13 days are not a skew but a trace of another run: clamped, so that no sum
      // of them overflows whatever the traces hold.
      constexpr int64_t kMaxOffset = int64_t{1} << 50;
      const auto offset = std::clamp(static_cast<int64_t>(a.start - in.first_start), -kMaxOffset, kMaxOffset);
      in.sum_offset += offset;
      in.min_offset = std::min(in.min_offset, offset);
      if (offset > in.max_offset || (offset == in.max_offset && ShownBefore(row.id, rows_[in.late_row].id))) {
        in.max_offset = offset;
        in.late_row = row_index;
        in.late_before = a.before;
      }
    }
    in.sum_before.Add(a.before);
    ++in.ranks;
  }
  if (steps_.size() < s.steps.size()) steps_.resize(s.steps.size());
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepTiming& st = s.steps[i];
    steps_[i].push_back(StepCell{row_index, st.duration(), st.work_ns(), st.compute_ns, st.copy_ns});
  }
  if (!s.step_name.empty()) ++step_names_[s.step_name];
  rows_.push_back(std::move(row));
}

RankSetReport RankSetAnalyzer::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  RankSetReport out;
  const double min_late = thresholds_.straggler_min_skew_us * 1000.0;
  const uint32_t complete = ranks_with_collectives_;
  InstanceTally tally = TallyInstances(instances_, complete, min_late, rows_);
  out.matched_instances = tally.matched;

  std::vector<double> active;
  for (const RankRow& r : rows_) active.push_back(static_cast<double>(r.active_ns));
  const uint64_t span = Positive(MidpointMedian(active));

  if (std::optional<Finding> f =
          StragglerFinding(rows_, out.matched_instances, complete, tally.total_wait_ns, span, thresholds_)) {
    out.findings.push_back(std::move(*f));
  }
  out.step_name = ChooseStepName(step_names_, &out.warnings);
  const size_t ranks_with_steps = std::count_if(rows_.begin(), rows_.end(), [&out](const RankRow& r) {
    return r.steps > 0 && r.step_name == out.step_name;
  });
  const std::vector<StepComparison> steps = CompareSteps(steps_, rows_, out.step_name, ranks_with_steps);
  if (ranks_with_steps >= 2) {
    out.matched_steps = steps.size();
    if (std::optional<Finding> f = StepImbalanceFinding(steps, rows_, ranks_with_steps, out.step_name,
                                                        out.matched_steps, span, thresholds_)) {
      out.findings.push_back(std::move(*f));
    }
  }
  if (std::optional<Finding> f = CommExposedFinding(rows_, span, thresholds_)) out.findings.push_back(std::move(*f));
  std::stable_sort(out.findings.begin(), out.findings.end(), [](const Finding& a, const Finding& b) {
    return a.severity != b.severity ? a.severity > b.severity : a.recoverable_ns > b.recoverable_ns;
  });

  AddSetWarnings(rows_, tally.unmatched, complete, &out.warnings);

  // Tables. Rows by rank (those without one after them, as given).
  const std::vector<uint32_t> order = ShownOrder(rows_);
  out.tables.push_back(RanksTable(rows_, order, out.matched_instances));
  out.tables.push_back(CollectivesTable(tally.by_key, rows_, keys_));
  out.tables.push_back(StepsTable(steps, rows_));

  for (uint32_t i : order) out.ranks.push_back(rows_[i]);
  return out;
}

}  // namespace cuscope::ranks
