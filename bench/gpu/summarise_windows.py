"""Summarises bench/gpu/windows_overhead.sh: per workload, each collector's added µs per kernel.

Each input line is one process: `workload=W collector=C round=R ... plain_us_per_kernel=P
added_us_per_kernel=A added_min=.. added_max=..`, A being the median, inside that process, of
the differences between a collected stretch and the plain stretch of the same round. The table
gives, per collector, the median of A over its processes and their range, and the ratios the
cost targets are stated in: to torch.profiler's added time, and to the bare CUPTI collector that
records the same (cuscope-X to bare-X).

    python3 bench/gpu/summarise_windows.py windows.txt
"""
import statistics
import sys


def parse(lines):
    """The measurement lines' fields; other lines are left out."""
    rows = []
    for line in lines:
        fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if {"workload", "collector", "added_us_per_kernel", "plain_us_per_kernel"} <= fields.keys():
            rows.append(fields)
    return rows


def twin_of(collector):
    """The bare collector that records what a cuscope collector records."""
    return "bare-" + collector[len("cuscope-"):] if collector.startswith("cuscope-") else None


def summarise(rows):
    """{workload: [{collector, n, plain, added, low, high, to_torch, twin, to_twin}]}, collectors in
    the order they first appear; a ratio is None where its reference is missing or zero."""
    out = {}
    for workload in sorted({r["workload"] for r in rows}):
        added, plain = {}, {}
        for r in rows:
            if r["workload"] == workload:
                added.setdefault(r["collector"], []).append(float(r["added_us_per_kernel"]))
                plain.setdefault(r["collector"], []).append(float(r["plain_us_per_kernel"]))
        median = {c: statistics.median(v) for c, v in added.items()}

        def ratio(c, ref):
            return median[c] / median[ref] if ref in median and median[ref] != 0 and c != ref else None

        out[workload] = [{
            "collector": c, "n": len(v), "plain": statistics.median(plain[c]), "added": median[c],
            "low": min(v), "high": max(v), "to_torch": ratio(c, "torch.profiler"),
            "twin": twin_of(c), "to_twin": ratio(c, twin_of(c)),
        } for c, v in added.items()]
    return out


def format_table(summary):
    lines = []
    for workload, entries in summary.items():
        lines.append(f"== {workload}: µs added per kernel, in-process windows (median over processes of each "
                     f"process's median)")
        lines.append(f"{'collector':27s} {'n':>2s} {'plain':>7s} {'added':>7s} {'range':>15s} "
                     f"{'/torch.profiler':>16s} {'/bare twin':>22s}")
        for e in entries:
            to_torch = f"{e['to_torch']:.2f}" if e["to_torch"] is not None else "-"
            to_twin = f"{e['to_twin']:.2f} ({e['twin']})" if e["to_twin"] is not None else "-"
            spread = f"{e['low']:.3f}-{e['high']:.3f}"
            lines.append(f"{e['collector']:27s} {e['n']:2d} {e['plain']:7.3f} {e['added']:7.3f} {spread:>15s} "
                         f"{to_torch:>16s} {to_twin:>22s}")
        lines.append("")
    return "\n".join(lines)


def main(argv):
    if len(argv) != 2:
        print("usage: summarise_windows.py WINDOWS.TXT", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        rows = parse(f)
    if not rows:
        print(f"summarise_windows.py: no measurement in {argv[1]}", file=sys.stderr)
        return 1
    print(format_table(summarise(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
