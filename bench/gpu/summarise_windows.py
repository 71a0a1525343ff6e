"""Summarises bench/gpu/windows_overhead.sh: per workload, each collector's added µs per kernel.

Each input line is one process: `workload=W collector=C round=R ... plain_us_per_kernel=P
added_us_per_kernel=A added_min=.. added_max=..`, A being the median, inside that process, of
the differences between a collected stretch and the plain stretch of the same round. The table
gives, per collector, the median of A over its processes and their range, and the ratios the
cost targets are stated in: to torch.profiler's added time, and to the bare CUPTI collector that
records the same (cuscope-lean to bare-lean, cuscope-kernel to bare-kernel).

    python3 bench/gpu/summarise_windows.py windows.txt
"""
import statistics
import sys

TWINS = {"cuscope-lean": "bare-lean", "cuscope-kernel": "bare-kernel"}


def parse(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if "workload" in fields and "added_us_per_kernel" in fields:
                rows.append(fields)
    return rows


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    rows = parse(argv[1])
    if not rows:
        print(f"summarise_windows.py: no measurement in {argv[1]}", file=sys.stderr)
        return 1
    for workload in sorted({r["workload"] for r in rows}):
        added, plain = {}, {}
        for r in rows:
            if r["workload"] != workload:
                continue
            added.setdefault(r["collector"], []).append(float(r["added_us_per_kernel"]))
            plain.setdefault(r["collector"], []).append(float(r["plain_us_per_kernel"]))
        median = {c: statistics.median(v) for c, v in added.items()}
        print(f"== {workload}: µs added per kernel, in-process windows (median over processes of each "
              f"process's median)")
        print(f"{'collector':27s} {'n':>2s} {'plain':>7s} {'added':>7s} {'range':>15s} {'/torch.profiler':>16s} "
              f"{'/bare twin':>16s}")
        for c in added:
            ref = median.get("torch.profiler")
            to_torch = f"{median[c] / ref:.2f}" if ref and c != "torch.profiler" else "-"
            twin = TWINS.get(c)
            to_twin = f"{median[c] / median[twin]:.2f} ({twin})" if twin in median and median[twin] else "-"
            spread = f"{min(added[c]):.3f}-{max(added[c]):.3f}"
            print(f"{c:27s} {len(added[c]):2d} {statistics.median(plain[c]):7.3f} {median[c]:7.3f} {spread:>15s} "
                  f"{to_torch:>16s} {to_twin:>16s}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
