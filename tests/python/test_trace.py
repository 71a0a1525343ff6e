"""Tests of the cuscope Python package (python/) on the H200 traces in traces/ and on small traces
built here, and its agreement with the `cuscope` command's tables.

Run with Debian's interpreter (it has protobuf, pandas and pytest):

    CUSCOPE_CLI=build/bin/cuscope CUSCOPE_SOURCE_DIR=. /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python

The protobuf modules are generated into a temporary folder first, so nothing is installed and
nothing is written into the source tree. Without CUSCOPE_CLI the comparisons with the command are
skipped.
"""

from __future__ import annotations

import json
import math
import os
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
def cuscope(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The package from python/, its protobuf modules generated into a temporary folder."""
    out = tmp_path_factory.mktemp("protos")
    subprocess.run([sys.executable, str(SOURCE_DIR / "python" / "generate_protos.py"), str(out)], check=True,
                   capture_output=True)
    sys.path[:0] = [str(SOURCE_DIR / "python"), str(out)]
    import cuscope as package

    return package


@pytest.fixture(scope="session")
def pb(cuscope: ModuleType) -> ModuleType:
    """The generated trace_pb2 module, to build small traces with."""
    from cuscope.v1 import trace_pb2

    return trace_pb2


@pytest.fixture(scope="session")
def cli() -> str:
    """The built cuscope command, named by CUSCOPE_CLI."""
    binary = os.environ.get("CUSCOPE_CLI")
    if not binary:
        pytest.skip("CUSCOPE_CLI is not set")
    return binary


@pytest.fixture(scope="session")
def known_work(cuscope: ModuleType) -> Any:
    return cuscope.read_trace(KNOWN_WORK)


def run_stats(cli: str, report: str, trace: Path) -> list[dict[str, Any]]:
    """The rows of one `cuscope stats` report, as its JSON output has them."""
    command = [cli, "stats", "--report", report, "--format", "json", "--kernel-names", "mangled", str(trace)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    (table,) = json.loads(result.stdout)
    assert table["report"] == report
    return table["rows"]


def display_api_name(name: str) -> str:
    """The API name as cuscope's tables show it: without a trailing _v<digits> (api_names.cc)."""
    head, sep, tail = name.rpartition("_v")
    return head if sep and tail.isascii() and tail.isdigit() else name


def framed(block: Any) -> bytes:
    """One block as the file holds it: a varint length, then the serialized Block."""
    payload = block.SerializeToString()
    n, prefix = len(payload), bytearray()
    while n >= 0x80:
        prefix.append((n & 0x7F) | 0x80)
        n >>= 7
    prefix.append(n)
    return bytes(prefix) + payload


def header_block(pb: ModuleType, version: int = 1) -> bytes:
    block = pb.Block()
    block.header.format_version = version
    return framed(block)


# ---- The known-work trace: 1,000 + 500 kernels of two names ------------------------------------


def test_known_work_kernels(known_work: Any) -> None:
    k = known_work.kernels
    assert len(k) == 1500
    assert k["name"].value_counts().to_dict() == {"_Z11known_smallPj": 1000, "_Z9known_bigPj": 500}
    assert (k["duration_ns"] > 0).all()
    assert (k["end_ns"] - k["start_ns"] == k["duration_ns"]).all()
    assert (k["start_ns"] > 1.6e18).all()
    assert k["start_ns"].is_monotonic_increasing
    assert k["start_ns"].min() >= known_work.header.session.start_time_ns
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
    assert (launches["name_api"] == "cudaLaunchKernel_v7000").all()
    assert (launches["domain"] == "runtime").all()
    assert (launches["start_ns_api"] <= launches["start_ns"]).all(), "a launch call begins before its kernel"
    assert (api["name"] == "cudaLaunchKernel_v7000").sum() == 1500
    assert set(api["domain"]) == {"runtime", "driver"}
    assert (api["pid"] == known_work.header.session.pid).all()


def test_known_work_other_records(known_work: Any) -> None:
    t = known_work
    assert t.header.format_version == 1 and t.truncated_bytes == 0 and t.corruption is None
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


# ---- Agreement with the cuscope command ---------------------------------------------------------


@pytest.mark.parametrize("trace", ALL_TRACES, ids=lambda p: str(p.relative_to(TRACES)))
def test_kernel_summary_matches_cli(cuscope: ModuleType, cli: str, trace: Path) -> None:
    """Instances and total time per kernel name equal cuda_gpu_kern_sum's (replayed launches are
    not on the timeline, so not in the table)."""
    expected: dict[str, tuple[int, int]] = {}
    for row in run_stats(cli, "cuda_gpu_kern_sum", trace):
        n, total = expected.get(row["Name"], (0, 0))
        expected[row["Name"]] = (n + row["Instances"], total + row["Total Time (ns)"])
    k = cuscope.read_trace(trace).kernels
    groups = k[k["on_timeline"]].groupby("name")["duration_ns"].agg(["size", "sum"])
    assert {name: (int(g["size"]), int(g["sum"])) for name, g in groups.iterrows()} == expected


@pytest.mark.parametrize("trace", ALL_TRACES, ids=lambda p: str(p.relative_to(TRACES)))
def test_api_summary_matches_cli(cuscope: ModuleType, cli: str, trace: Path) -> None:
    """Calls and total time per API name equal cuda_api_sum's (names shown without _vNNNN)."""
    expected: dict[str, tuple[int, int]] = {}
    for row in run_stats(cli, "cuda_api_sum", trace):
        n, total = expected.get(row["Name"], (0, 0))
        expected[row["Name"]] = (n + row["Instances"], total + row["Total Time (ns)"])
    api = cuscope.read_trace(trace).api_calls
    groups = api.groupby(api["name"].map(display_api_name))["duration_ns"].agg(["size", "sum"])
    assert {name: (int(g["size"]), int(g["sum"])) for name, g in groups.iterrows()} == expected


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


def test_analyze_without_binary(cuscope: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="cannot run"):
        cuscope.analyze(KNOWN_WORK, cuscope_binary=str(tmp_path / "no-such-cuscope"))


# ---- Kernel metrics, GPU counters and the top-down ----------------------------------------------


def test_kernel_metrics(cuscope: ModuleType) -> None:
    t = cuscope.read_trace(GEMM_METRICS)
    m = t.metrics
    assert len(m) > 0 and (m["correlation_id"] > 0).all()
    assert m["value"].map(math.isfinite).all()
    assert "gpu__time_duration.sum" in set(m["metric"])
    assert (m["replay_mode"] == "kernel").all() and (m["pass_count"] > 0).all()
    # Each profiled launch has its kernel row, flagged as replayed and so off the timeline.
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


# ---- Damaged and foreign files ------------------------------------------------------------------


def test_cut_file_keeps_complete_blocks(cuscope: ModuleType, tmp_path: Path) -> None:
    data = GEMM_METRICS.read_bytes()
    full = cuscope.read_trace(GEMM_METRICS)
    cut = tmp_path / "cut.cuscope"
    cut.write_bytes(data[: len(data) // 2])
    t = cuscope.read_trace(cut)
    assert t.truncated_bytes > 0 and t.corruption is None
    assert 0 < t.chunks < full.chunks
    assert 0 < len(t.api_calls) < len(full.api_calls)
    head = full.api_calls.head(len(t.api_calls))
    assert t.api_calls.equals(head), "the complete blocks decode as in the whole file"


def block_ends(data: bytes) -> list[int]:
    """The offset just past each block of a whole trace (the header's first)."""
    ends, pos = [], 8
    while pos < len(data):
        length = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        pos += length
        ends.append(pos)
    return ends


def test_cut_at_any_byte(cuscope: ModuleType, tmp_path: Path) -> None:
    data = KNOWN_WORK.read_bytes()
    ends = block_ends(data)
    cut = tmp_path / "cut.cuscope"
    sizes = {*range(0, len(data), 499), *ends, *(e - 1 for e in ends), *(e + 1 for e in ends[:-1])}
    for size in sorted(sizes):
        cut.write_bytes(data[:size])
        complete = [e for e in ends if e <= size]
        if not complete:  # cut inside the magic or the header: not a trace
            with pytest.raises(ValueError, match="not a cuscope trace") as e:
                cuscope.read_trace(cut)
            assert str(cut) in str(e.value)
            continue
        t = cuscope.read_trace(cut)
        assert t.chunks == len(complete) - 1 and t.corruption is None
        assert t.truncated_bytes == size - complete[-1]
    assert len(t.kernels) == 1500 and t.truncated_bytes == 0


def test_not_a_trace(cuscope: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text, long enough to look like something\n")
    with pytest.raises(ValueError, match="not a cuscope trace") as e:
        cuscope.read_trace(path)
    assert str(path) in str(e.value)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="bad magic"):
        cuscope.read_trace(path)


def test_unknown_format_version(cuscope: ModuleType, pb: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "future.cuscope"
    path.write_bytes(b"CUSCOPE\n" + header_block(pb, version=2))
    with pytest.raises(ValueError, match="format version 2") as e:
        cuscope.read_trace(path)
    assert str(path) in str(e.value)
    path.write_bytes(b"CUSCOPE\n" + header_block(pb, version=0))
    with pytest.raises(ValueError, match="no header"):
        cuscope.read_trace(path)


def test_damaged_block_keeps_what_came_before(cuscope: ModuleType, tmp_path: Path) -> None:
    data = KNOWN_WORK.read_bytes()
    whole = cuscope.read_trace(KNOWN_WORK)
    path = tmp_path / "damaged.cuscope"
    path.write_bytes(data + b"\x05\xff\xff\xff\xff\xff")  # a last block that is no Block
    t = cuscope.read_trace(path)
    assert t.corruption is not None and "does not decode" in t.corruption
    assert t.chunks == whole.chunks and t.kernels.equals(whole.kernels)


# ---- The encoding, on a trace built here --------------------------------------------------------


def test_column_encoding(cuscope: ModuleType, pb: ModuleType, tmp_path: Path) -> None:
    """Deltas (also negative), optional columns, interned ids across chunks, message records."""
    first = pb.Block()
    c = first.chunk
    c.sequence, c.base_time_ns = 1, 1_000_000
    for i, text in enumerate(["kern_a", "cudaLaunchKernel_v7000", "phase", "mem"], start=1):
        c.strings.add(id=i, value=text)
    c.kernel_signatures.add(id=1, name=1, device=0, context=1, grid_x=8, grid_y=1, grid_z=1, block_x=64, block_y=1,
                            block_z=1, registers_per_thread=32, dynamic_shared_memory=256)
    c.api_functions.add(id=1, domain=pb.API_DOMAIN_RUNTIME, callback_id=211, name=2)
    c.threads.add(id=1, pid=42, tid=4242)
    c.kernels.start_delta.extend([50, 100, -30])  # starts 1_000_050, 1_000_150, 1_000_120
    c.kernels.duration.extend([10, 20, 30])
    c.kernels.signature.extend([1, 1, 1])
    c.kernels.stream.extend([7, 7, 8])
    c.kernels.correlation_delta.extend([11, 2, -1])  # ids 11, 13, 12
    c.kernels.flags.extend([0, pb.KERNEL_FLAG_REPLAYED, 0])
    c.kernels.queued_lead.extend([45, 0, -5])  # queued 1_000_005, not recorded, 1_000_125
    c.api_calls.start_delta.extend([5, 40])
    c.api_calls.duration.extend([3, 4])
    c.api_calls.function.extend([1, 1])
    c.api_calls.thread.extend([1, 1])
    c.api_calls.correlation_delta.extend([11, 2])
    c.memcpys.add(start=-500, duration=9, copy_kind=pb.COPY_KIND_DTOH, bytes=4096, correlation_id=12, stream=8)
    c.nvtx_markers.add(time=1, kind=pb.NVTX_KIND_RANGE_START, id=5, thread=1, name=3)
    c.counter_series.add(device=0, source=pb.COUNTER_SOURCE_NVML, name=4, start_delta=[0, 100], value=[1.5, 2.5])
    c.windows.add(kind=pb.WINDOW_KIND_TIMELINE, start_ns=999_000, reason="session")
    second = pb.Block()
    c = second.chunk
    c.sequence, c.base_time_ns = 2, 2_000_000
    c.kernels.start_delta.append(7)  # the signature of chunk 1; no optional columns here
    c.kernels.duration.append(1)
    c.kernels.signature.append(1)
    c.kernels.stream.append(7)
    c.kernels.correlation_delta.append(20)
    c.nvtx_markers.add(time=-999_000, kind=pb.NVTX_KIND_RANGE_END, id=5, thread=1)
    c.stats.records_written = 11
    path = tmp_path / "built.cuscope"
    path.write_bytes(b"CUSCOPE\n" + header_block(pb) + framed(first) + framed(second))

    t = cuscope.read_trace(path)
    k = t.kernels
    assert list(k["start_ns"]) == [1_000_050, 1_000_150, 1_000_120, 2_000_007]
    assert list(k["end_ns"]) == [1_000_060, 1_000_170, 1_000_150, 2_000_008]
    assert list(k["correlation_id"]) == [11, 13, 12, 20]
    assert list(k["replayed"]) == [False, True, False, False]
    assert list(k["on_timeline"]) == [True, False, True, True]
    assert list(k["graph_id"]) == [0, 0, 0, 0]
    assert list(k["queued_ns"]) == [1_000_005, 0, 1_000_125, 0]
    assert set(k["name"]) == {"kern_a"} and set(k["dynamic_shared_memory"]) == {256} and set(k["grid_x"]) == {8}
    assert list(t.api_calls["start_ns"]) == [1_000_005, 1_000_045]
    assert list(t.api_calls["correlation_id"]) == [11, 13]
    assert list(t.api_calls["return_code"]) == [0, 0]
    assert (t.api_calls["name"] == "cudaLaunchKernel_v7000").all() and (t.api_calls["tid"] == 4242).all()
    m = t.memcpys.iloc[0]
    assert (m["start_ns"], m["end_ns"], m["copy_kind"], m["src_kind"]) == (999_500, 999_509, "dtoh", "unknown")
    n = t.nvtx.iloc[0]
    assert (n["kind"], n["name"], n["domain"], n["start_ns"], n["end_ns"]) == ("range", "phase", "", 1_000_001,
                                                                                1_001_000)
    assert list(t.counters["start_ns"]) == [1_000_000, 1_000_100] and list(t.counters["duration_ns"]) == [0, 0]
    assert list(t.counters["name"]) == ["mem", "mem"]
    w = t.windows.iloc[0]
    assert (w["kind"], w["start_ns"], w["end_ns"]) == ("timeline", 999_000, 0), "still open"
    assert t.stats["records_written"] == 11 and t.chunks == 2


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
    # The kernel the clone ran, joined through its node.
    graph_kernels = t.kernels[t.kernels["graph_node_id"] == 9100]
    assert len(graph_kernels) == 1
    # Without stacks, the tables are empty but typed.
    plain = cuscope.read_trace(SOURCE_DIR / "traces/h200_known_work.cuscope")
    assert list(plain.launch_stacks.columns) == ["correlation_id", "stack", "frames"]
    assert plain.launch_stacks.empty and plain.graph_nodes.empty


def test_a_stack_naming_an_undefined_frame_is_damage(cuscope: ModuleType, pb: ModuleType, tmp_path: Path) -> None:
    block = pb.Block()
    c = block.chunk
    c.strings.add(id=1, value="/opt/app")
    c.stack_frames.add(id=1, module=1)
    c.call_stacks.add(id=1, frames=[2])
    path = tmp_path / "bad_stack.cuscope"
    path.write_bytes(b"CUSCOPE\n" + header_block(pb) + framed(block))
    t = cuscope.read_trace(path)
    assert t.corruption is not None and "call stack 1" in t.corruption
    assert t.launch_stacks.empty
    # A Python frame naming a source file never defined.
    block = pb.Block()
    block.chunk.strings.add(id=1, value="/opt/app")
    block.chunk.stack_frames.add(id=1, module=1, source_file=5)
    path.write_bytes(b"CUSCOPE\n" + header_block(pb) + framed(block))
    t = cuscope.read_trace(path)
    assert t.corruption is not None and "stack frame 1" in t.corruption
