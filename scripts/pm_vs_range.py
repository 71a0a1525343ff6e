#!/usr/bin/env python3
"""GPU counter samples against the Range Profiler on the same kernel.

  pm_vs_range.py --samples SAMPLED.dump --range PROFILED.dump --kernel SUBSTRING
                 [--pm-metric NAME] [--range-metric NAME]

SAMPLED.dump: `cuscope dump` of a run with --gpu-metrics-devices (kernel and counter lines);
PROFILED.dump: `cuscope dump` of a run with --metrics sol on the same kernel (metrics lines).
Averages the PM samples that lie wholly inside a launch of the kernel (so the kernel's ramp-up and
the gaps between launches stay out) and the Range Profiler's values of that kernel, and prints both
with their difference in percentage points.

The default PM sampling counters (lib/cupti/pm_sampling_config.h) have no sm__throughput, a
maximum over many SM sub-units; the default compares their instruction-issue rate, the sub-unit
that sets sm__throughput in an FMA- or issue-bound kernel.
"""
import argparse
import re
import statistics
import sys

REL = re.compile(r"^([+-][0-9.]+)us$")


def micros(field):
    m = REL.match(field)
    return float(m.group(1)) if m else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", required=True)
    p.add_argument("--range", required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--pm-metric", default="sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed")
    p.add_argument("--range-metric", default="sm__throughput.avg.pct_of_peak_sustained_elapsed")
    a = p.parse_args()

    spans, samples = [], []
    with open(a.samples) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "kernel" and a.kernel in parts[-1] and "replayed" not in parts:
                start = micros(parts[1])
                dur = float(parts[2].split("=")[1].rstrip("ns")) / 1e3
                spans.append((start, start + dur))
            elif parts[0] == "counter" and parts[-1].startswith(a.pm_metric + "="):
                start = micros(parts[1])
                dur = float(parts[2].split("=")[1].rstrip("ns")) / 1e3
                samples.append((start, start + dur, float(parts[-1].split("=", 1)[1])))
    inside = [v for (s, e, v) in samples if any(ks <= s and e <= ke for (ks, ke) in spans)]
    ranged = []
    with open(a.range) as f:
        for line in f:
            if line.startswith("metrics ") and a.kernel in line.partition(": ")[0]:
                for item in line.partition(": ")[2].split():
                    key, _, value = item.partition("=")
                    if key == a.range_metric:
                        ranged.append(float(value))
    print(f"kernel {a.kernel}: {len(spans)} launches sampled, {len(inside)} of {len(samples)} samples inside them, "
          f"{len(ranged)} launches range-profiled")
    if not inside or not ranged:
        print("not enough data to compare")
        return 1
    pm, rp = statistics.mean(inside), statistics.mean(ranged)
    print(f"PM sampling {a.pm_metric}: mean {pm:.1f} (min {min(inside):.1f}, max {max(inside):.1f})")
    print(f"Range Profiler {a.range_metric}: mean {rp:.1f}")
    print(f"difference: {pm - rp:+.1f} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
