#!/usr/bin/env python3
"""1,000,000 kernels (each with its launch call) into pandas with the Python package: wall time and
peak memory of `cuscope.read_trace` (the export to SQLite in the cuscope command, then pandas),
median of the rounds. The trace is export_bench's (bench/export_bench.cc), kept for this reading.

    /usr/bin/python3 bench/python_read_bench.py [--build build] [--rounds 5]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    build = Path(args.build)
    with tempfile.TemporaryDirectory(prefix="cuscope-bench-") as scratch:
        trace = Path(scratch) / "million.cuscope"
        env = dict(os.environ, CUSCOPE_BENCH_KEEP_TRACE=str(trace))
        subprocess.run([str(build / "bin" / "export_bench"), "--benchmark_filter=SqliteNoFindings"], env=env,
                       check=True, capture_output=True)
        os.environ["CUSCOPE_CLI"] = str(build / "bin" / "cuscope")
        sys.path.insert(0, str(ROOT / "python"))
        import cuscope

        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            t = cuscope.read_trace(trace, findings=False)
            times.append(time.perf_counter() - start)
            kernels = len(t.kernels)
            del t
        self_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        child_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"{kernels} kernels: read_trace median {statistics.median(times):.2f} s "
              f"(min {min(times):.2f}, max {max(times):.2f}, {args.rounds} rounds); "
              f"peak memory: Python {self_mib:.0f} MiB, the cuscope command {child_mib:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
