#!/usr/bin/env python3
"""Compares cuscope's kernel metrics with ncu's on the same launches and prints a Markdown report.

  compare_ncu.py --cuscope A.dump --ncu A.csv [--cuscope B.dump --ncu B.csv ...]

A.dump: the `metrics` lines of `cuscope dump --limit N TRACE`; A.csv: `ncu --import R --csv --page raw
--print-units base --print-kernel-base mangled`. Launches are matched by mangled kernel name, grid and
block, and within those by duration (see pair_up); ncu's -k regex also catches launches of the same
name with other shapes, so ask it for more launches than cuscope profiled. Tolerances: percentages within 1 percentage point; a stall reason as its share
of the warp cycles between issues (the way the analyzer reports it) within 1 point; every other
value within 3% relative. Exit status 1 when any value is out of tolerance.

Each kernel also gets a verdict from both sides' mean values by the analyzer's rule
(lib/analysis/kernel_internals.cc, DecideBottleneck, default thresholds; the sol-set path, without
the roofline): the report says whether cuscope's and ncu's numbers lead to the same verdict.
"""
import argparse
import csv
import re
import sys
from collections import defaultdict

STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")
LATENCY = "smsp__average_warp_latency_per_inst_issued.ratio"
NCU_LAUNCH = ["sm__maximum_warps_per_active_cycle_pct", "launch__occupancy_limit_registers",
              "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks",
              "launch__registers_per_thread", "launch__occupancy_per_block_size"]


COMPUTE_BOUND, MEMORY_BOUND, LATENCY_BOUND = 60.0, 60.0, 40.0  # the analyzer's default thresholds
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
L2 = "lts__throughput.avg.pct_of_peak_sustained_elapsed"
L1 = "l1tex__throughput.avg.pct_of_peak_sustained_active"
MEM = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"


def verdict(v):
    """The analyzer's bottleneck verdict from mean metric values (sol set)."""
    sm = v.get(SM)
    roof = max([v[m] for m in (DRAM, L2) if m in v], default=None)
    compute_high = sm is not None and sm >= COMPUTE_BOUND
    memory_high = roof is not None and roof >= MEMORY_BOUND
    if compute_high and memory_high:
        return "memory-bound" if roof > sm else "compute-bound"
    if compute_high:
        return "compute-bound"
    if memory_high:
        return "memory-bound"
    if sm is None or (roof is None and MEM not in v and L1 not in v):
        return "undetermined"
    l1_side = max(v.get(MEM, 0), v.get(L1, 0))
    if roof is None and l1_side >= MEMORY_BOUND:
        return "undetermined"
    busiest = max(roof or 0, v.get(MEM, 0), v.get(L1, 0))
    if sm < LATENCY_BOUND and busiest < LATENCY_BOUND:
        return "latency-bound"
    return "mixed"


def shape(text):
    """'2,66,1' or '(2, 66, 1)' -> (2, 66, 1)"""
    return tuple(int(x) for x in re.findall(r"\d+", text or ""))


def read_cuscope(path):
    rows = []
    with open(path) as f:
        for line in f:
            if not line.startswith("metrics "):
                continue
            head, _, body = line.partition(": ")
            fields = head.split()
            name = fields[-1].rstrip(":")
            grid = next((shape(f[5:]) for f in fields if f.startswith("grid=")), ())
            block = next((shape(f[6:]) for f in fields if f.startswith("block=")), ())
            values = {}
            for item in body.split():
                key, _, value = item.partition("=")
                values[key] = float(value)
            rows.append(((name, grid, block), values))
    return rows


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_ncu(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu may print ==PROF== lines first
    reader = list(csv.reader(lines))
    header, rows = reader[0], reader[2:]  # reader[1] holds the units
    out = []
    for r in rows:
        cells = dict(zip(header, r))
        values = {k: number(v) for k, v in cells.items() if number(v) is not None}
        key = (cells.get("Kernel Name", "?"), shape(cells.get("Grid Size")), shape(cells.get("Block Size")))
        out.append((key, values))
    return out


def pair_up(cuscope_rows, ncu_rows):
    """Pairs launches of one name + grid + block in order of duration: a persistent kernel (cuBLAS's
    nvjet) keeps its grid for GEMMs of different sizes, and cuscope (after the window) and ncu (from
    the program's start) see those in different orders."""
    by_key = defaultdict(list)
    for key, values in ncu_rows:
        by_key[key].append(values)
    ours_by_key = defaultdict(list)
    for key, values in cuscope_rows:
        # A dump without shapes (older traces) matches by name alone: every ncu launch of that name.
        if not key[1] and not key[2] and key not in by_key:
            by_key[key] = [v for k, rows in by_key.items() if k[0] == key[0] for v in rows]
        ours_by_key[key].append(values)
    duration = lambda v: v.get("gpu__time_duration.sum", 0)
    for key, ours in ours_by_key.items():
        theirs = sorted(by_key.get(key, []), key=duration)
        ours = sorted(ours, key=duration)
        # With more ncu launches than ours, take for each of ours the closest in duration not yet taken.
        taken = set()
        for k, values in enumerate(ours):
            free = [i for i in range(len(theirs)) if i not in taken]
            if not free:
                break
            best = min(free, key=lambda i: abs(duration(theirs[i]) - duration(values)))
            taken.add(best)
            yield key, k, values, theirs[best]


def means(rows):
    sums, counts = defaultdict(float), defaultdict(int)
    for values in rows:
        for m, x in values.items():
            sums[m] += x
            counts[m] += 1
    return {m: sums[m] / counts[m] for m in sums}


def compare(metric, ours, theirs, our_latency, their_latency):
    """(what is compared, our value, ncu's value, difference text, within tolerance)"""
    stall = STALL.match(metric)
    if stall and our_latency and their_latency:
        a, b = 100 * ours / our_latency, 100 * theirs / their_latency
        return f"{stall.group(1)} share %", a, b, f"{a - b:+.2f} pt", abs(a - b) <= 1.0
    if "pct" in metric:
        return metric, ours, theirs, f"{ours - theirs:+.2f} pt", abs(ours - theirs) <= 1.0
    if theirs == 0:
        return metric, ours, theirs, "-", ours == 0
    rel = (ours - theirs) / abs(theirs)
    return metric, ours, theirs, f"{100 * rel:+.2f}%", abs(rel) <= 0.03


def short(name, width=60):
    return name if len(name) <= width else name[: width - 3] + "..."


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cuscope", action="append", required=True)
    parser.add_argument("--ncu", action="append", required=True)
    args = parser.parse_args()
    if len(args.cuscope) != len(args.ncu):
        sys.exit("give --cuscope and --ncu in pairs")
    total = within = 0
    misses = []
    verdicts = []
    print("# Kernel metrics: cuscope against ncu --clock-control none, same launches\n")
    for ours_path, theirs_path in zip(args.cuscope, args.ncu):
        pairs = list(pair_up(read_cuscope(ours_path), read_ncu(theirs_path)))
        print(f"## {ours_path} vs {theirs_path}: {len(pairs)} launches\n")
        by_kernel = defaultdict(lambda: ([], []))
        for key, k, ours, theirs in pairs:
            by_kernel[key][0].append(ours)
            by_kernel[key][1].append(theirs)
        for (name, grid, block), (ours, theirs) in by_kernel.items():
            a, b = verdict(means(ours)), verdict(means(theirs))
            verdicts.append((f"{short(name)} grid {grid} block {block}", len(ours), a, b))
        for (name, grid, block), k, ours, theirs in pairs:
            print(f"### `{short(name, 100)}` grid {grid} block {block} (launch {k + 1} by duration)\n")
            print("| metric | cuscope | ncu | difference | within |")
            print("| --- | ---: | ---: | ---: | --- |")
            for metric in ours:
                if metric not in theirs:
                    continue
                what, a, b, diff, ok = compare(metric, ours[metric], theirs[metric], ours.get(LATENCY),
                                               theirs.get(LATENCY))
                total += 1
                within += ok
                if not ok:
                    misses.append(f"{short(name)} {what}: cuscope {a:.4g}, ncu {b:.4g} ({diff})")
                print(f"| {what} | {a:.4g} | {b:.4g} | {diff} | {'yes' if ok else '**no**'} |")
            launch = [f"{m.split('__', 1)[1]}={theirs[m]:g}" for m in NCU_LAUNCH if m in theirs]
            if launch:
                print(f"\nncu's occupancy calculator: {', '.join(launch)}")
            print()
    print("## Verdicts (the analyzer's rule on each side's mean values)\n")
    print("| kernel | launches | cuscope | ncu | same |")
    print("| --- | ---: | --- | --- | --- |")
    for kernel, n, a, b in verdicts:
        print(f"| {kernel} | {n} | {a} | {b} | {'yes' if a == b else '**no**'} |")
    agree = sum(a == b for _, _, a, b in verdicts)
    print(f"\n{agree} of {len(verdicts)} kernels get the same verdict from cuscope's and ncu's numbers.\n")
    print(f"## Summary\n\n{within} of {total} values within tolerance.\n")
    for m in misses:
        print(f"- out of tolerance: {m}")
    return 0 if total > 0 and within == total else 1


if __name__ == "__main__":
    sys.exit(main())
