#!/usr/bin/env python3
"""Checks what a monitor-mode Prometheus endpoint served against the trace of the same run.

Usage: prometheus_vs_trace.py METRICS_TXT TRACE CUSCOPE_CLI

METRICS_TXT is a scrape of /metrics taken after the run's last interval closed; TRACE a file of
the same run with a trace window over all of it (example_inference_server --trace-everything).
Compares kernels, kernel GPU time and GPU busy time per device, and the copies; exits 1 when one
differs by more than 0.5% (busy time: 2%).
"""
import json
import re
import subprocess
import sys
from collections import defaultdict

SAMPLE = re.compile(r'^([a-z_]+)\{([^}]*)\} ([0-9.eE+-]+)$')


def scrape(path):
    values = defaultdict(float)
    with open(path) as f:
        for line in f:
            m = SAMPLE.match(line.strip())
            if not m:
                continue
            name, labels, value = m.groups()
            device = re.search(r'device="(\d+)"', labels)
            values[(name, device.group(1) if device else "")] += float(value)
    return values


def trace_figures(trace, cli):
    def run(*args):
        return json.loads(subprocess.run([cli, *args, trace], check=True, capture_output=True, text=True).stdout)
    analysis = run("analyze", "--format", "json")
    devices = {str(d.get("device", 0)): d for d in analysis["summary"].get("devices", [])}
    copies = 0
    for table in run("stats", "--report", "cuda_gpu_mem_size_sum", "--format", "json"):
        for row in table["rows"]:
            if "memcpy" in row.get("Operation", ""):
                copies += int(row["Count"])
    return devices, copies


def main():
    metrics, trace, cli = sys.argv[1:4]
    served = scrape(metrics)
    devices, copies = trace_figures(trace, cli)
    failed = False

    def check(what, device, prom, trace_value, tolerance):
        nonlocal failed
        diff = abs(prom - trace_value) / trace_value if trace_value else (0 if prom == 0 else 1)
        ok = diff <= tolerance
        failed |= not ok
        print(f"device {device} {what}: Prometheus {prom:.6g}, trace {trace_value:.6g}, "
              f"difference {100 * diff:.3f}% {'ok' if ok else 'TOO FAR'}")

    for device, d in sorted(devices.items()):
        check("kernels", device, served[("cuscope_kernels_total", device)], int(d.get("kernels", 0)), 0.005)
        check("kernel GPU seconds", device, served[("cuscope_kernel_gpu_seconds_total", device)],
              int(d.get("kernel_time_ns", 0)) / 1e9, 0.005)
        check("GPU busy seconds", device, served[("cuscope_gpu_busy_seconds_total", device)],
              int(d.get("busy_ns", 0)) / 1e9, 0.02)
    check("copies", "all", sum(v for (n, _), v in served.items() if n == "cuscope_copies_total"), copies, 0.005)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
