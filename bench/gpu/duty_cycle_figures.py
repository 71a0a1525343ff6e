#!/usr/bin/env python3
"""What bench/gpu/duty_cycle_check.sh measured: per workload and variant, the cost (median of the
per-round differences to plain, as a share of plain, with the spread), and how right the monitor's
figures stayed: kernels counted against those the program launched; busy share, top-10 kernels by
GPU time and idle by cause against monitor-full (recording all the time) of the same round; and the
share of the time recorded.

    python3 bench/gpu/duty_cycle_figures.py duty.txt --cuscope build-device/bin/cuscope
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

CAUSES = ["idleSync", "idleCopy", "idleAlloc", "idleSetup", "idleLaunch", "idleOutsideCuda"]


def parse(path):
    runs = []
    with open(path) as f:
        for line in f:
            fields = dict(token.partition("=")[::2] for token in line.split() if "=" in token)
            if {"workload", "variant", "round", "us_per_kernel"} <= fields.keys():
                runs.append(fields)
    return runs


def figures(cuscope, trace, scratch):
    """The trace's monitor figures, summed over its intervals (None when it cannot be read)."""
    db = os.path.join(scratch, os.path.basename(trace) + ".sqlite")
    done = subprocess.run([cuscope, "export", "--format", "sqlite", "--no-findings", "-f", "-o", db, trace],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{trace}: {done.stderr.strip()}", file=sys.stderr)
        return None
    con = sqlite3.connect(db)
    try:
        busy, idle, kernels, *causes = con.execute(
            "SELECT SUM(busy), SUM(idle), SUM(kernels), " + ", ".join(f"SUM({c})" for c in CAUSES) +
            " FROM CUSCOPE_MONITOR_DEVICES").fetchone()
        length, observed = con.execute(
            "SELECT SUM(end - start), SUM(CASE WHEN estimated THEN observed ELSE end - start END) "
            "FROM CUSCOPE_MONITOR_INTERVALS").fetchone()
        top = dict(con.execute(
            "SELECT s.value, SUM(gpuTime) FROM CUSCOPE_MONITOR_KERNELS k JOIN StringIds s ON s.id = k.nameId "
            "GROUP BY s.value ORDER BY 2 DESC LIMIT 10").fetchall())
    finally:
        con.close()
    busy, idle = busy or 0, idle or 0
    return {
        "busy_share": 100.0 * busy / (busy + idle) if busy + idle else 0.0,
        "kernels": kernels or 0,
        "causes": [100.0 * (c or 0) / idle if idle else 0.0 for c in causes],
        "recorded": (observed or 0) / length if length else 0.0,
        "top": top,
    }


def spread(values):
    return f"{statistics.median(values):+7.2f}% ({min(values):+.2f}..{max(values):+.2f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--cuscope", required=True)
    args = parser.parse_args()
    runs = parse(args.results)
    by = {(r["workload"], r["variant"], int(r["round"])): r for r in runs}
    workloads = sorted({r["workload"] for r in runs})
    variants = sorted({r["variant"] for r in runs if r["variant"] != "plain"}, key=lambda v: (v == "monitor-full", v))
    with tempfile.TemporaryDirectory() as scratch:
        for w in workloads:
            rounds = sorted({int(r["round"]) for r in runs if r["workload"] == w})
            plain = {k: float(by[(w, "plain", k)]["us_per_kernel"]) for k in rounds if (w, "plain", k) in by}
            print(f"== {w}: plain {statistics.median(plain.values()):.3f} us per kernel (median of {len(plain)})")
            print(f"   {'variant':<13} {'cost (median, spread)':<28} {'kernels vs launched':<22} {'recorded':<9} "
                  f"{'busy share vs full':<22} {'idle by cause':<16} top-10 vs full")
            full = {k: figures(args.cuscope, by[(w, 'monitor-full', k)]["trace"], scratch)
                    for k in rounds if (w, "monitor-full", k) in by}
            for v in variants:
                costs, kernel_err, busy_diff, cause_diff, top_err, recorded = [], [], [], [], [], []
                top_same = True
                for k in rounds:
                    run = by.get((w, v, k))
                    if run is None or k not in plain:
                        continue
                    costs.append(100.0 * (float(run["us_per_kernel"]) - plain[k]) / plain[k])
                    f = figures(args.cuscope, run["trace"], scratch)
                    if f is None:
                        continue
                    launched = float(run["kernels_launched"])
                    kernel_err.append(100.0 * (f["kernels"] - launched) / launched)
                    recorded.append(f["recorded"])
                    ref = full.get(k)
                    if ref is None or v == "monitor-full":
                        continue
                    busy_diff.append(f["busy_share"] - ref["busy_share"])
                    cause_diff.append(max(abs(a - b) for a, b in zip(f["causes"], ref["causes"])))
                    top_same &= set(f["top"]) == set(ref["top"])
                    for name, ns in ref["top"].items():
                        if name in f["top"] and ns > 0:
                            top_err.append(abs(f["top"][name] - ns) / ns * 100)
                kernels_text = spread(kernel_err) if kernel_err else "-"
                busy_text = (f"{statistics.median(busy_diff):+.2f} pt (max {max(busy_diff, key=abs):+.2f})"
                             if busy_diff else "-")
                cause_text = f"max {max(cause_diff):.2f} pt" if cause_diff else "-"
                top_text = (f"{'same set' if top_same else 'SETS DIFFER'}, max {max(top_err):.1f}% apart"
                            if top_err else "-")
                print(f"   {v:<13} {spread(costs) if costs else '-':<28} {kernels_text:<22} "
                      f"{statistics.median(recorded) * 100 if recorded else 0:7.1f}%  {busy_text:<22} "
                      f"{cause_text:<16} {top_text}")


if __name__ == "__main__":
    main()
