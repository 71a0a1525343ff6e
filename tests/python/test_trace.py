"""Tests of the cuscope Python package (python/): traces read through `cuscope export --format sqlite`
into DataFrames, their agreement with the `cuscope` command's tables, and nsys's report queries run
on the database with Python's sqlite3.

Run with Debian's interpreter (it has pandas and pytest):

    CUSCOPE_CLI=build/bin/cuscope CUSCOPE_SOURCE_DIR=. /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python

Nothing is skipped: without CUSCOPE_CLI, or without pandas, the tests fail.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SOURCE_DIR = Path(os.environ.get("CUSCOPE_SOURCE_DIR") or Path(__file__).resolve().parents[2])
TRACES = SOURCE_DIR / "traces"
KNOWN_WORK = TRACES / "h200_known_work.cuscope"
GEMM_METRICS = TRACES / "h200_torch_gemm_metrics.cuscope"
TOP_DOWN = TRACES / "h200_torch_top_down_stuck_correlation.cuscope"
ALL_TRACES = sorted(TRACES.rglob("*.cuscope"))


@pytest.fixture(scope="session")
def cli() -> str:
    """The built cuscope command, named by CUSCOPE_CLI (required: the package runs it)."""
    binary = os.environ.get("CUSCOPE_CLI")
    assert binary, "CUSCOPE_CLI must name the built cuscope command"
    return binary


@pytest.fixture(scope="session")
def cuscope(cli: str) -> ModuleType:
    """The package from python/ (it finds the command through CUSCOPE_CLI)."""
    sys.path.insert(0, str(SOURCE_DIR / "python"))
    import cuscope as package

    return package


@pytest.fixture(scope="session")
def known_work(cuscope: ModuleType) -> Any:
    return cuscope.read_trace(KNOWN_WORK)


def run_stats(cli: str, report: str, trace: Path, fmt: str = "json") -> Any:
    """One `cuscope stats` report: its JSON rows, or its CSV text."""
    command = [cli, "stats", "--report", report, "--format", fmt, "--kernel-names", "mangled", str(trace)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    if fmt == "csv":
        return result.stdout
    (table,) = json.loads(result.stdout)
    assert table["report"] == report
    return table["rows"]


# ---- The known-work trace: 1,000 + 500 kernels of two names ------------------------------------


def test_known_work_kernels(known_work: Any) -> None:
    k = known_work.kernels
    assert len(k) == 1500
    assert k["name"].value_counts().to_dict() == {"_Z11known_smallPj": 1000, "_Z9known_bigPj": 500}
    assert set(k["base_name"]) == {"known_small", "known_big"}
    assert (k["duration_ns"] > 0).all()
    assert (k["end_ns"] - k["start_ns"] == k["duration_ns"]).all()
    # Nanoseconds from the session's start, as nsys; the start itself on CUPTI's clock.
    assert known_work.session_start_ns > 1.6e18
    assert (k["start_ns"] > 0).all() and (k["start_ns"] < 10e9).all()
    assert k["start_ns"].is_monotonic_increasing
    window = known_work.windows.iloc[0]
    assert (window["kind"], window["reason"], window["end_reason"]) == ("timeline", "session", "end")
    assert (k["start_ns"] >= window["start_ns"]).all() and (k["end_ns"] <= window["end_ns"]).all()
    assert not k["replayed"].any() and k["on_timeline"].all()
    small = k[k["name"] == "_Z11known_smallPj"].iloc[0]
    big = k[k["name"] == "_Z9known_bigPj"].iloc[0]
    assert (small["grid_x"], small["block_x"], big["grid_x"], big["block_x"]) == (4, 128, 256, 256)
    assert big["static_shared_memory"] == 1024 and small["launch_type"] == "regular"


def test_known_work_launches_correlate(known_work: Any) -> None:
    k, api = known_work.kernels, known_work.api_calls
    assert k["correlation_id"].is_unique
    launches = k.merge(api, on="correlation_id", how="left", suffixes=("", "_api"))
    assert launches["name_api"].notna().all(), "every kernel has its launch call"
    assert (launches["name_api"] == "cudaLaunchKernel").all(), "names as cuscope's tables show them"
    assert (launches["domain"] == "runtime").all()
    assert (launches["start_ns_api"] <= launches["start_ns"]).all(), "a launch call begins before its kernel"
    assert set(api["domain"]) == {"runtime", "driver"}
    assert (api["pid"] == int(known_work.session["CUSCOPE_PID"])).all()


def test_known_work_other_records(known_work: Any) -> None:
    t = known_work
    assert t.truncated_bytes == 0 and t.corruption is None and t.chunks == 2
    assert sorted(t.memcpys["copy_kind"]) == ["dtoh", "dtoh", "htod", "htod"]
    assert set(t.memcpys["bytes"]) == {1 << 20, 2 << 20}
    assert len(t.memsets) == 1 and t.memsets["memory_kind"].iloc[0] == "device"
    assert set(t.synchronizations["type"]) == {"stream_synchronize", "context_synchronize"}
    nvtx = t.nvtx.set_index("name")
    assert nvtx.loc["known_mark", "kind"] == "mark" and nvtx.loc["known_mark", "duration_ns"] == 0
    outer, inner = nvtx.loc["known_outer"], nvtx.loc["known_inner"]
    assert outer["kind"] == inner["kind"] == "range"
    assert outer["start_ns"] < inner["start_ns"] < inner["end_ns"] < outer["end_ns"]
    assert set(t.memory_operations["type"]) == {"allocation", "release"}
    # Every record the collector wrote is a row (an NVTX range is two records, a mark one).
    rows = sum(len(getattr(t, name)) for name in ("kernels", "api_calls", "memcpys", "memsets", "synchronizations",
                                                   "memory_operations", "overheads"))
    nvtx_records = 2 * (t.nvtx["kind"] == "range").sum() + (t.nvtx["kind"] == "mark").sum()
    assert rows + nvtx_records == t.stats["records_written"] == 4671
    # Tables without rows still have their columns.
    assert t.metrics.empty and {"correlation_id", "kernel_name", "metric", "value"} <= set(t.metrics.columns)
    assert t.counters.empty and {"device", "name", "start_ns", "end_ns", "value"} <= set(t.counters.columns)
    assert t.top_down.empty and "total_ns" in t.top_down.columns
    assert t.monitor_intervals.empty and "busy_ns" in t.monitor_devices.columns
    assert t.devices["name"].iloc[0] == "NVIDIA H200"


def test_findings_are_the_analyzers(cuscope: ModuleType, cli: str, known_work: Any) -> None:
    report = cuscope.analyze(KNOWN_WORK, cuscope_binary=cli)
    assert list(known_work.findings["rule"]) == [f["rule_id"] for f in report["findings"]]
    assert cuscope.read_trace(KNOWN_WORK, findings=False).findings.empty


# ---- Agreement with the cuscope command ---------------------------------------------------------


@pytest.mark.parametrize("trace", ALL_TRACES, ids=lambda p: str(p.relative_to(TRACES)))
def test_kernel_and_api_summaries_match_cli(cuscope: ModuleType, cli: str, trace: Path) -> None:
    """Instances and total time per kernel and per API name equal cuda_gpu_kern_sum's and
    cuda_api_sum's (replayed launches are not on the timeline, so not in the table)."""
    t = cuscope.read_trace(trace, findings=False)
    expected = {row["Name"]: (row["Instances"], row["Total Time (ns)"]) for row in run_stats(cli, "cuda_gpu_kern_sum", trace)}
    k = t.kernels[t.kernels["on_timeline"]]
    groups = k.groupby("name")["duration_ns"].agg(["size", "sum"])
    assert {name: (int(g["size"]), int(g["sum"])) for name, g in groups.iterrows()} == expected
    expected = {row["Name"]: (row["Num Calls"], row["Total Time (ns)"]) for row in run_stats(cli, "cuda_api_sum", trace)}
    groups = t.api_calls.groupby("name")["duration_ns"].agg(["size", "sum"])
    assert {name: (int(g["size"]), int(g["sum"])) for name, g in groups.iterrows()} == expected


@pytest.mark.parametrize("trace", [KNOWN_WORK, GEMM_METRICS, TOP_DOWN], ids=lambda p: p.name)
def test_nsys_report_queries_give_the_rows_of_cuscope_stats(cli: str, trace: Path, tmp_path: Path) -> None:
    """examples/sql, written against nsys's tables, on the database: the rows `cuscope stats` prints."""
    db = tmp_path / "trace.sqlite"
    subprocess.run([cli, "export", "--format", "sqlite", "--no-findings", "-o", str(db), str(trace)], check=True,
                   capture_output=True)
    for report, query in (("cuda_gpu_kern_sum", "cuda_gpu_kern_sum.sql"), ("cuda_api_sum", "cuda_api_sum.sql")):
        sql = (SOURCE_DIR / "examples" / "sql" / query).read_text().replace("k.shortName", "k.mangledName")
        with sqlite3.connect(db) as connection:
            connection.create_function("sqrt", 1, math.sqrt)  # where SQLite lacks its math functions
            cursor = connection.execute(sql)
            header = [d[0] for d in cursor.description]
            got = {row[-1]: row for row in cursor.fetchall()}
        expected = list(csv.reader(io.StringIO(run_stats(cli, report, trace, fmt="csv"))))
        assert header == expected[0]
        assert len(got) == len(expected) - 1
        for row in expected[1:]:
            mine = got[row[-1]]
            for cell, value in zip(row[:-1], mine[:-1]):
                assert float(cell) == pytest.approx(float(value), abs=0.051), (report, row[-1])


def test_analyze(cuscope: ModuleType, cli: str) -> None:
    report = cuscope.analyze(KNOWN_WORK, cuscope_binary=cli)
    assert isinstance(report, dict) and "findings" in report
    assert int(report["summary"]["kernels"]) == 1500
    assert cuscope.analyze(KNOWN_WORK)["summary"] == report["summary"], "CUSCOPE_CLI is the default"


def test_analyze_fails_clearly(cuscope: ModuleType, cli: str, tmp_path: Path) -> None:
    not_a_trace = tmp_path / "notes.txt"
    not_a_trace.write_text("hello\n")
    with pytest.raises(RuntimeError, match="bad magic"):
        cuscope.analyze(not_a_trace, cuscope_binary=cli)


def test_without_binary(cuscope: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="cannot run"):
        cuscope.analyze(KNOWN_WORK, cuscope_binary=str(tmp_path / "no-such-cuscope"))
    with pytest.raises(RuntimeError, match="cannot run"):
        cuscope.read_trace(KNOWN_WORK, cuscope_binary=str(tmp_path / "no-such-cuscope"))


# ---- Kernel metrics, GPU counters and the top-down ----------------------------------------------


def test_kernel_metrics(cuscope: ModuleType) -> None:
    t = cuscope.read_trace(GEMM_METRICS)
    m = t.metrics
    assert len(m) > 0 and (m["correlation_id"] > 0).all()
    assert m["value"].map(math.isfinite).all()
    assert "gpu__time_duration.sum" in set(m["metric"])
    assert (m["replay_mode"] == "kernel").all() and (m["pass_count"] > 0).all()
    # Each profiled launch has its kernel row, replayed and so off the timeline.
    profiled = t.kernels[t.kernels["correlation_id"].isin(m["correlation_id"])]
    assert set(profiled["correlation_id"]) == set(m["correlation_id"])
    assert profiled["replayed"].all() and not profiled["on_timeline"].any()
    assert (profiled["correlation_id"].map(m.groupby("correlation_id")["kernel_name"].first()) == profiled["name"]).all()
    wide = m.pivot_table(index="correlation_id", columns="metric", values="value")
    assert len(wide) == m["correlation_id"].nunique()
    assert (t.windows["kind"] == "metrics").sum() > 0


def test_counters_and_top_down(cuscope: ModuleType) -> None:
    t = cuscope.read_trace(TOP_DOWN)
    c = t.counters
    assert len(c) > 0 and set(c["source"]) == {"pm_sampling", "nvml"}
    pm, nvml = c[c["source"] == "pm_sampling"], c[c["source"] == "nvml"]
    assert (pm["duration_ns"] > 0).all() and (nvml["duration_ns"] == 0).all()
    pct = c[c["name"].str.contains("pct_of_peak")]
    assert len(pct) > 0 and pct["value"].between(0, 100).all()
    power = nvml[nvml["name"] == "nvml.power_w"]["value"]
    assert len(power) > 0 and power.between(10, 1500).all()
    window = t.windows[t.windows["kind"] == "counter_sampling"].iloc[0]
    assert ((c["start_ns"] >= window["start_ns"]) & (c["end_ns"] <= window["end_ns"])).all()
    assert list(t.top_down["rank"]) == [0, 1, 2]
    assert t.top_down["total_ns"].is_monotonic_decreasing
    # CUPTI gave every kernel correlation id 3, which a metrics row also has: a "stuck" id ties
    # nothing, so every launch stays on the timeline.
    k = t.kernels
    assert (k["correlation_id"] == 3).all() and 3 in set(t.metrics["correlation_id"])
    assert k["on_timeline"].all()


def test_launch_stacks_and_graph_nodes(cuscope: ModuleType) -> None:
    """Call stacks (--stacks), from the fuzzers' synthetic seed: launches and graph nodes."""
    t = cuscope.read_trace(SOURCE_DIR / "tests/fuzz/corpus/synthetic_one_chunk")
    assert t.corruption is None
    stacks = t.launch_stacks
    assert len(stacks) == 3
    assert set(stacks["frames"]) == {
        "cudaLaunchKernel (libcudart.so.13) <- _ZN5model5trainEv (trainer)",
        "cudaLaunchKernel (libcudart.so.13) <- Model.forward (train.py:12) <- <module> (train.py:30)",
    }
    nodes = t.graph_nodes.set_index("node_id")
    assert list(nodes.index) == [9000, 9100]
    assert nodes.loc[9000, "stack"] == stacks["stack"].iloc[0]
    assert nodes.loc[9000, "tid"] == 211 and nodes.loc[9000, "pid"] == 4242
    assert nodes.loc[9100, "original_node_id"] == 9000 and nodes.loc[9100, "frames"] == ""
    graph_kernels = t.kernels[t.kernels["graph_node_id"] == 9100]
    assert len(graph_kernels) == 1
    plain = cuscope.read_trace(KNOWN_WORK, findings=False)
    assert list(plain.launch_stacks.columns) == ["correlation_id", "stack", "frames"]
    assert plain.launch_stacks.empty and plain.graph_nodes.empty


# ---- Damaged and foreign files ------------------------------------------------------------------


def test_cut_file_keeps_complete_blocks(cuscope: ModuleType, tmp_path: Path) -> None:
    data = GEMM_METRICS.read_bytes()
    full = cuscope.read_trace(GEMM_METRICS, findings=False)
    cut = tmp_path / "cut.cuscope"
    cut.write_bytes(data[: len(data) // 2])
    t = cuscope.read_trace(cut, findings=False)
    assert t.truncated_bytes > 0 and t.corruption is None
    assert 0 < t.chunks < full.chunks
    assert 0 < len(t.api_calls) < len(full.api_calls)
    head = full.api_calls.head(len(t.api_calls))
    assert t.api_calls.equals(head), "the complete blocks read as in the whole file"


def test_damaged_block_keeps_what_came_before(cuscope: ModuleType, tmp_path: Path) -> None:
    data = KNOWN_WORK.read_bytes()
    whole = cuscope.read_trace(KNOWN_WORK, findings=False)
    path = tmp_path / "damaged.cuscope"
    path.write_bytes(data + b"\x05\xff\xff\xff\xff\xff")  # a last block that is no Block
    t = cuscope.read_trace(path, findings=False)
    assert t.corruption is not None and "does not decode" in t.corruption
    assert t.chunks == whole.chunks and t.kernels.equals(whole.kernels)


def test_not_a_trace(cuscope: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text, long enough to look like something\n")
    with pytest.raises(ValueError, match="not a cuscope trace") as e:
        cuscope.read_trace(path)
    assert str(path) in str(e.value)
    with pytest.raises(FileNotFoundError):
        cuscope.read_trace(tmp_path / "missing.cuscope")
    db = tmp_path / "other #1.sqlite"  # a name with characters a URI would misread
    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    with pytest.raises(ValueError, match="not a database written by cuscope"):
        cuscope.read_sqlite(db)
    other = tmp_path / "no_tables.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as connection:
        connection.execute("CREATE TABLE t (x)")
    with pytest.raises(ValueError, match="not a database written by cuscope"):
        cuscope.read_sqlite(other)
    with pytest.raises(ValueError, match="not a database written by cuscope"):
        cuscope.read_sqlite(path)  # the text file
    assert not (tmp_path / "other ").exists()
