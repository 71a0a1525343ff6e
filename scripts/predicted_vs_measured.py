#!/usr/bin/env python3
"""Predicted against measured savings for each example and its fixed twin (issue: "could recover"
must come from a model of what the fix changes).

For each pair of H200 traces in traces/h200_examples/: the prediction is the "could recover" of the
rule that names the example's symptom (cuscope analyze --format json on the example); the
measurement is what the fixed twin saved in steady state (cuscope diff --format json: the
comparison `cuscope diff` makes by default, start-up left out). Prints a Markdown table.

    scripts/predicted_vs_measured.py [CUSCOPE_BINARY] [TRACES_DIR]
"""

import json
import subprocess
import sys
from pathlib import Path

# example, fixed twin, the rule that names the symptom, and why the prediction can only be an upper
# bound where it is one.
PAIRS = [
    ("launch_overhead", "launch_overhead_fixed_fused", "launch.overhead", ""),
    ("launch_overhead", "launch_overhead_fixed_graph", "launch.overhead", ""),
    ("sync_every_step", "sync_every_step_fixed", "sync.points", ""),
    ("pageable_copies", "pageable_copies_fixed", "copies.pageable_async", ""),
    ("legacy_default_stream", "legacy_default_stream_fixed", "streams.serialized", ""),
    ("event_wait_stall", "event_wait_stall_fixed", "streams.event_wait", ""),
    ("torch_item_sync", "torch_item_sync_fixed", "sync.points", ""),
]
TOLERANCE = 0.25


def run_json(cli: str, *args: str) -> dict:
    out = subprocess.run([cli, *args, "--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def main() -> int:
    cli = sys.argv[1] if len(sys.argv) > 1 else "build/bin/cuscope"
    traces = Path(sys.argv[2] if len(sys.argv) > 2 else "traces/h200_examples")
    print("| example | fixed twin | rule | predicted | measured (steady state) | predicted / measured | |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    outside = 0
    for example, twin, rule, bound_reason in PAIRS:
        symptom = traces / f"{example}.cuscope"
        fixed = traces / f"{twin}.cuscope"
        report = run_json(cli, "analyze", str(symptom))
        predicted = next((int(f.get("recoverable_ns", 0)) for f in report["findings"] if f["rule_id"] == rule), None)
        diff = run_json(cli, "diff", str(symptom), str(fixed))
        measured = -int(diff["steady_state"]["change"])
        if predicted is None:
            print(f"| {example} | {twin} | {rule} | not raised | {ms(measured)} | | |")
            outside += 1
            continue
        ratio = predicted / measured if measured > 0 else float("inf")
        within = abs(ratio - 1) <= TOLERANCE
        note = "within ±25%" if within else (f"upper bound: {bound_reason}" if bound_reason else "outside ±25%")
        outside += not within and not bound_reason
        print(f"| {example} | {twin} | {rule} | {ms(predicted)} | {ms(measured)} | {ratio:.2f} | {note} |")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
