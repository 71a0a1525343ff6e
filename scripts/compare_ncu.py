#!/usr/bin/env python3
"""Compares cuscope's kernel metrics with ncu's on the same launches and prints a Markdown report.

  compare_ncu.py --cuscope A.dump --ncu A.csv [--cuscope B.dump --ncu B.csv ...]

A.dump: the `metrics` lines of `cuscope dump --limit N TRACE`; A.csv: `ncu --import R --csv --page raw
--print-units base --print-kernel-base mangled`. Launches are matched by mangled kernel name and
order of occurrence. Tolerances: percentages within 1 percentage point; a stall reason as its share
of the warp cycles between issues (the way the analyzer reports it) within 1 point; every other
value within 3% relative. Exit status 1 when any value is out of tolerance.
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


def read_cuscope(path):
    rows = []
    with open(path) as f:
        for line in f:
            if not line.startswith("metrics "):
                continue
            head, _, body = line.partition(": ")
            name = head.split()[-1].rstrip(":")
            values = {}
            for item in body.split():
                key, _, value = item.partition("=")
                values[key] = float(value)
            rows.append((name, values))
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
        out.append((cells.get("Kernel Name", "?"), values))
    return out


def pair_up(cuscope_rows, ncu_rows):
    by_name = defaultdict(list)
    for name, values in ncu_rows:
        by_name[name].append(values)
    seen = defaultdict(int)
    for name, values in cuscope_rows:
        k = seen[name]
        seen[name] += 1
        if k < len(by_name[name]):
            yield name, k, values, by_name[name][k]


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
    print("# Kernel metrics: cuscope against ncu --clock-control none, same launches\n")
    for ours_path, theirs_path in zip(args.cuscope, args.ncu):
        pairs = list(pair_up(read_cuscope(ours_path), read_ncu(theirs_path)))
        print(f"## {ours_path} vs {theirs_path}: {len(pairs)} launches\n")
        for name, k, ours, theirs in pairs:
            print(f"### `{short(name, 100)}` (launch {k + 1})\n")
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
    print(f"## Summary\n\n{within} of {total} values within tolerance.\n")
    for m in misses:
        print(f"- out of tolerance: {m}")
    return 0 if total > 0 and within == total else 1


if __name__ == "__main__":
    sys.exit(main())
