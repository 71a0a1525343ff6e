#!/usr/bin/env python3
"""Summarises interleaved overhead measurements into one table per workload and metric.

Input: lines of key=value fields, one per run, as bench/gpu/overhead_matrix.sh and
bench/gpu/server_overhead.sh write them:

    workload=pytorch variant=cuscope-lean round=3 us_per_kernel=5.12 wall_s=4.1

Lines without workload, variant and round are ignored. For each workload and each --metric, per
variant: the median over rounds, the spread (min-max), the value added over --baseline (the median
of the per-round differences, so a slow round affects every variant alike), the median's ratio to
the baseline's, and, where given, the added value as a multiple of the added value of --reference
(e.g. torch.profiler) and of the matching bare-CUPTI variant (cuscope-X matches bare-X; --pair
A=B names others).

    python3 bench/gpu/summarise_overhead.py --metric us_per_kernel --baseline plain \\
        --reference torch.profiler --pair cuscope-monitor=bare-lean results.txt
"""
import argparse
import statistics
import sys


def parse_lines(lines):
    """The runs in `lines`: dicts with workload, variant, round (int) and the numeric fields."""
    runs = []
    for line in lines:
        fields = {}
        for token in line.split():
            key, sep, value = token.partition("=")
            if sep:
                fields[key] = value
        if not {"workload", "variant", "round"} <= fields.keys():
            continue
        try:
            run = {"workload": fields.pop("workload"), "variant": fields.pop("variant"),
                   "round": int(fields.pop("round"))}
        except ValueError:
            continue
        for key, value in fields.items():
            try:
                run[key] = float(value)
            except ValueError:
                pass  # a text field (a note): not a metric
        runs.append(run)
    return runs


def matching_bare(variant, variants, pairs):
    """The bare-CUPTI variant `variant` is compared with, or None."""
    if variant in pairs:
        # A twin none of whose runs gave a number (each failed) is no twin to compare with.
        return pairs[variant] if pairs[variant] in variants else None
    if variant.startswith("cuscope-"):
        bare = "bare-" + variant[len("cuscope-"):]
        if bare in variants:
            return bare
    return None


def _ratio(numerator, denominator):
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def summarise(runs, workload, metric, baseline, reference=None, pairs=None, order=None):
    """One row (a dict) per variant of `workload` that has `metric`, baseline first.

    Keys: variant, n, median, min, max, added, ratio_to_baseline, ratio_to_reference, bare,
    ratio_to_bare. A value that cannot be computed (no baseline rounds, a reference that adds
    nothing) is None.
    """
    pairs = pairs or {}
    by_variant = {}
    for run in runs:
        if run["workload"] == workload and metric in run:
            by_variant.setdefault(run["variant"], {})[run["round"]] = run[metric]
    base = by_variant.get(baseline, {})

    def added(variant):
        diffs = [value - base[r] for r, value in by_variant[variant].items() if r in base]
        return statistics.median(diffs) if diffs else None

    ranked = list(order or []) + sorted(by_variant)
    variants = [baseline] if baseline in by_variant else []
    for v in ranked:
        if v in by_variant and v not in variants:
            variants.append(v)
    reference_added = added(reference) if reference in by_variant else None
    base_median = statistics.median(base.values()) if base else None
    rows = []
    for v in variants:
        values = list(by_variant[v].values())
        median = statistics.median(values)
        row_added = added(v)
        bare = matching_bare(v, by_variant, pairs)
        rows.append({
            "variant": v, "n": len(values), "median": median, "min": min(values), "max": max(values),
            "added": row_added,
            "ratio_to_baseline": _ratio(median, base_median),
            "ratio_to_reference": _ratio(row_added, reference_added) if v != reference else None,
            "bare": bare,
            "ratio_to_bare": _ratio(row_added, added(bare)) if bare else None,
        })
    return rows


def _number(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def format_table(workload, metric, baseline, rows, reference=None):
    """The rows as a fixed-width text table under a heading."""
    rounds = max((r["n"] for r in rows), default=0)
    out = [f"== {workload}: {metric} ({rounds} rounds; added = median of per-round differences to {baseline})"]
    header = ["variant", "n", "median", "min-max", "added", f"x {baseline}"]
    if reference:
        header.append(f"added/{reference}")
    with_bare = any(r["bare"] for r in rows)
    if with_bare:
        header.append("added/bare (bare variant)")
    table = [header]
    for r in rows:
        cells = [r["variant"], str(r["n"]), _number(r["median"]),
                 f"{_number(r['min'])}-{_number(r['max'])}", _number(r["added"]), _number(r["ratio_to_baseline"])]
        if reference:
            cells.append(_number(r["ratio_to_reference"], 2))
        if with_bare:
            cells.append(f"{_number(r['ratio_to_bare'], 2)} ({r['bare']})" if r["bare"] else "-")
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        out.append("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", help="measurement lines (- for standard input)")
    parser.add_argument("--metric", action="append", required=True, help="a numeric field to summarise (repeatable)")
    parser.add_argument("--baseline", default="plain", help="the variant others are compared with")
    parser.add_argument("--reference", help="a variant whose added value the others are measured in")
    parser.add_argument("--pair", action="append", default=[], metavar="VARIANT=BARE",
                        help="compare VARIANT's added value with BARE's (cuscope-X=bare-X is implied)")
    parser.add_argument("--variants", default="", help="comma-separated display order (the rest follow, sorted)")
    args = parser.parse_args(argv)
    pairs = {}
    for p in args.pair:
        variant, sep, bare = p.partition("=")
        if not sep or not variant or not bare:
            parser.error(f"--pair {p}: expected VARIANT=BARE")
        pairs[variant] = bare
    with (sys.stdin if args.file == "-" else open(args.file)) as f:
        runs = parse_lines(f)
    if not runs:
        print(f"{args.file}: no measurement lines", file=sys.stderr)
        return 1
    order = [v for v in args.variants.split(",") if v]
    workloads = list(dict.fromkeys(run["workload"] for run in runs))
    for workload in workloads:
        for metric in args.metric:
            rows = summarise(runs, workload, metric, args.baseline, args.reference, pairs, order)
            if rows:
                print(format_table(workload, metric, args.baseline, rows, args.reference))
                print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
