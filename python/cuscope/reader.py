"""Reads cuscope traces into pandas DataFrames through SQLite: no decoder of the trace format here.

``read_trace(path)`` runs ``cuscope export --format sqlite`` (the command decodes, pairs and counts
as every other cuscope command does), then ``read_sqlite`` reads the database with Python's
``sqlite3`` and pandas. The database holds nsys's tables (``CUPTI_ACTIVITY_KIND_KERNEL``, ...) and
cuscope's own (``CUSCOPE_*``); the DataFrames below are views of them with names resolved. Times
are nanoseconds from the session's start, as in nsys; ``Trace.session_start_ns`` is that start on
CUPTI's clock (CLOCK_REALTIME on Linux).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cuscope.cli import default_binary

_SPAN = 'start AS start_ns, "end" AS end_ns, "end" - start AS duration_ns'
_SHAPE = "gridX AS grid_x, gridY AS grid_y, gridZ AS grid_z, blockX AS block_x, blockY AS block_y, blockZ AS block_z"
_PID = "globalTid / 16777216 % 16777216 AS pid, globalTid % 16777216 AS tid"
_LAUNCH_TYPES = {0: "regular", 1: "cooperative_single_device", 2: "cooperative_multi_device", 3: "command_list"}


def _enum(table: str, prefix: str) -> str:
    """An ENUM table's rows with short lower-case names (CUDA_MEMCPY_KIND_HTOD -> htod)."""
    return f"(SELECT id, lower(substr(name, {len(prefix) + 1})) AS name FROM {table})"


_MEM_KIND = _enum("ENUM_CUDA_MEM_KIND", "CUDA_MEMOPR_MEMORY_KIND_")

# Each DataFrame's query; rows in time order.
_QUERIES = {
    "memcpys": f"""SELECT {_SPAN}, c.name AS copy_kind, src.name AS src_kind, dst.name AS dst_kind, bytes,
        deviceId AS device, contextId AS context, streamId AS stream, correlationId AS correlation_id, async,
        coalesce(graphId, 0) AS graph_id, coalesce(graphNodeId, 0) AS graph_node_id
      FROM CUPTI_ACTIVITY_KIND_MEMCPY m
        LEFT JOIN {_enum("ENUM_CUDA_MEMCPY_OPER", "CUDA_MEMCPY_KIND_")} c ON c.id = m.copyKind
        LEFT JOIN {_MEM_KIND} src ON src.id = m.srcKind LEFT JOIN {_MEM_KIND} dst ON dst.id = m.dstKind
      ORDER BY start""",
    "memsets": f"""SELECT {_SPAN}, bytes, value, k.name AS memory_kind, deviceId AS device, contextId AS context,
        streamId AS stream, correlationId AS correlation_id, async, coalesce(graphId, 0) AS graph_id,
        coalesce(graphNodeId, 0) AS graph_node_id
      FROM CUPTI_ACTIVITY_KIND_MEMSET m LEFT JOIN {_MEM_KIND} k ON k.id = m.memKind ORDER BY start""",
    "synchronizations": f"""SELECT {_SPAN}, t.name AS type, deviceId AS device, contextId AS context,
        streamId AS stream, eventId AS event, correlationId AS correlation_id
      FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s
        LEFT JOIN {_enum("ENUM_CUPTI_SYNC_TYPE", "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_")} t ON t.id = s.syncType
      ORDER BY start""",
    "nvtx": f"""SELECT start AS start_ns, coalesce("end", start) AS end_ns, coalesce("end", start) - start AS duration_ns,
        CASE eventType WHEN 34 THEN 'mark' ELSE 'range' END AS kind, coalesce(t.value, text, '') AS name,
        coalesce(d.value, '') AS domain, {_PID}, coalesce(rangeId, 0) AS id,
        uint64Value AS payload_uint64, int64Value AS payload_int64, doubleValue AS payload_double
      FROM NVTX_EVENTS n LEFT JOIN StringIds t ON t.id = n.textId LEFT JOIN StringIds d ON d.id = n.domainId
      WHERE eventType = 34 OR (eventType IN (59, 60) AND "end" IS NOT NULL) ORDER BY start""",
    "memory_operations": f"""SELECT time AS time_ns, type, k.name AS memory_kind, bytes, address, deviceId AS device,
        contextId AS context, streamId AS stream, correlationId AS correlation_id, async
      FROM CUSCOPE_MEMORY_OPERATIONS m LEFT JOIN {_MEM_KIND} k ON k.id = m.memoryKind ORDER BY time""",
    "overheads": f"""SELECT {_SPAN}, coalesce(s.value, '') AS kind, {_PID}, correlationId AS correlation_id
      FROM CUSCOPE_OVERHEADS o LEFT JOIN StringIds s ON s.id = o.kindId ORDER BY start""",
    "metrics": f"""SELECT correlationId AS correlation_id, deviceId AS device, k.value AS kernel_name, {_SHAPE},
        passCount AS pass_count, replayMode AS replay_mode, n.value AS metric, m.value AS value
      FROM CUSCOPE_KERNEL_METRICS m JOIN StringIds k ON k.id = m.kernelName JOIN StringIds n ON n.id = m.metricName""",
    "counters": f"""SELECT deviceId AS device, source, s.value AS name, {_SPAN}, c.value AS value
      FROM CUSCOPE_COUNTER_SAMPLES c JOIN StringIds s ON s.id = c.nameId ORDER BY start""",
    "windows": """SELECT kind, start AS start_ns, "end" AS end_ns, reason, endReason AS end_reason FROM CUSCOPE_CAPTURE_WINDOWS""",
    "top_down": f"""SELECT time AS time_ns, rank, s.value AS name, deviceId AS device, {_SHAPE},
        windowGpuTime AS total_ns, windowLaunches AS launches, windowKernelTime AS window_kernel_ns
      FROM CUSCOPE_TOP_DOWN t LEFT JOIN StringIds s ON s.id = t.nameId ORDER BY time, rank""",
    "launch_stacks": """SELECT correlationId AS correlation_id, stackId AS stack FROM CUSCOPE_LAUNCH_STACKS""",
    "graph_nodes": f"""SELECT graphNodeId AS node_id, coalesce(stackId, 0) AS stack,
        coalesce(originalGraphNodeId, 0) AS original_node_id, created AS created_ns, {_PID}
      FROM CUSCOPE_GRAPH_NODES""",
    "requests": f"""SELECT r.id AS scope, {_SPAN}, requestId AS request_id, isBatch AS batch,
        coalesce(s.value, '') AS route, {_PID}
      FROM CUSCOPE_REQUEST_SCOPES r LEFT JOIN StringIds s ON s.id = r.routeId ORDER BY start""",
    "batch_requests": """SELECT scopeId AS scope, requestId AS request_id FROM CUSCOPE_BATCH_REQUESTS""",
    "monitor_intervals": f"""SELECT id AS interval, {_SPAN}, launchCalls AS launch_calls, syncCalls AS sync_calls,
        syncWait AS sync_wait_ns, recordsDropped AS records_dropped, lateRecords AS late_records,
        coalesce(estimated, 0) AS estimated, observed AS observed_ns, sampleWindows AS sample_windows,
        countBound AS count_bound
      FROM CUSCOPE_MONITOR_INTERVALS ORDER BY id""",
    "monitor_devices": """SELECT intervalId AS interval, deviceId AS device, busy AS busy_ns, idle AS idle_ns,
        idleSync AS idle_sync_ns, idleCopy AS idle_copy_ns, idleAlloc AS idle_alloc_ns, idleSetup AS idle_setup_ns,
        idleLaunch AS idle_launch_ns, idleOutsideCuda AS idle_outside_cuda_ns, kernels, kernelGpuTime AS kernel_gpu_ns,
        memsets, memsetBytes AS memset_bytes, memsetTime AS memset_ns, observed AS observed_ns,
        busyShareBound AS busy_share_bound
      FROM CUSCOPE_MONITOR_DEVICES ORDER BY intervalId, deviceId""",
    "monitor_kernels": f"""SELECT intervalId AS interval, deviceId AS device, rank, s.value AS name, {_SHAPE},
        launches, gpuTime AS gpu_ns
      FROM CUSCOPE_MONITOR_KERNELS k LEFT JOIN StringIds s ON s.id = k.nameId ORDER BY intervalId, deviceId, rank""",
    "findings": """SELECT id AS finding, rank, ruleId AS rule, severity, headline, recommendation,
        recoverable AS recoverable_ns FROM CUSCOPE_FINDINGS ORDER BY rank""",
    "devices": """SELECT id AS device, name, uuid, smCount AS sm_count, computeMajor AS compute_major,
        computeMinor AS compute_minor, totalMemory AS memory_bytes, l2CacheSize AS l2_cache_bytes,
        memoryBandwidth AS memory_bandwidth, clockRate AS clock_hz FROM TARGET_INFO_GPU ORDER BY id""",
}

# The launches and the calls can be millions of rows: their columns are read one at a time as one
# text of numbers (group_concat, parsed by numpy), not row by row as Python tuples (about 10 times
# faster, no Python object per cell), and names come from StringIds by index.
_KERNEL_ROW_COLUMNS = {"start_ns": "start", "end_ns": '"end"', "stream": "streamId",
                       "correlation_id": "correlationId", "signature": "signatureId",
                       "graph_id": "coalesce(graphId, 0)", "graph_node_id": "coalesce(graphNodeId, 0)",
                       "queued_ns": "coalesce(queued, 0)"}
_SIGNATURE_COLUMNS = {"signature": "id", "name": "mangledName", "base_name": "shortName",
                      "demangled_name": "demangledName", "device": "deviceId", "context": "contextId",
                      "grid_x": "gridX", "grid_y": "gridY", "grid_z": "gridZ", "block_x": "blockX",
                      "block_y": "blockY", "block_z": "blockZ", "registers_per_thread": "registersPerThread",
                      "static_shared_memory": "staticSharedMemory", "dynamic_shared_memory": "dynamicSharedMemory",
                      "local_memory_per_thread": "localMemoryPerThread",
                      "shared_memory_executed": "sharedMemoryExecuted", "launch_type": "launchType",
                      "cluster_x": "clusterX", "cluster_y": "clusterY", "cluster_z": "clusterZ",
                      "device_launched": "deviceLaunched"}
_API_ROW_COLUMNS = {"start_ns": "start", "end_ns": '"end"', "global_tid": "globalTid",
                    "correlation_id": "correlationId", "name_id": "nameId", "event_class": "eventClass",
                    "return_code": "returnValue"}


def _integer_columns(db: sqlite3.Connection, table: str, columns: dict[str, str]) -> dict[str, np.ndarray]:
    """Integer columns of a table in row order (a plain scan of a rowid table), each as an int64 array."""
    out = {}
    for name, expr in columns.items():
        (text,) = db.execute(f"SELECT group_concat({expr}) FROM {table}").fetchone()
        out[name] = np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)
    return out


def _kernels(db: sqlite3.Connection, strings: np.ndarray) -> pd.DataFrame:
    parts = []
    for table, on_timeline in (("CUPTI_ACTIVITY_KIND_KERNEL", True), ("CUSCOPE_KERNEL_REPLAYS", False)):
        part = pd.DataFrame(_integer_columns(db, table, _KERNEL_ROW_COLUMNS))
        part["on_timeline"] = on_timeline
        parts.append(part)
    rows = pd.concat(parts, ignore_index=True) if len(parts[1]) else parts[0]
    starts = rows["start_ns"].to_numpy()
    if len(starts) > 1 and (np.diff(starts) < 0).any():  # replays interleave, or records came late
        rows = rows.iloc[np.argsort(starts, kind="stable")].reset_index(drop=True)
    signatures = pd.DataFrame(_integer_columns(db, "CUSCOPE_KERNEL_SIGNATURES", _SIGNATURE_COLUMNS))
    position = pd.Index(signatures["signature"]).get_indexer(rows["signature"])
    out = pd.DataFrame({"start_ns": rows["start_ns"], "end_ns": rows["end_ns"],
                        "duration_ns": rows["end_ns"] - rows["start_ns"]})
    for column in ("name", "base_name", "demangled_name"):
        out[column] = strings[signatures[column].to_numpy()[position]]
    for column in ("device", "context"):
        out[column] = signatures[column].to_numpy()[position]
    out["stream"] = rows["stream"]
    out["correlation_id"] = rows["correlation_id"]
    for column in list(_SIGNATURE_COLUMNS)[6:]:
        out[column] = signatures[column].to_numpy()[position]
    out["launch_type"] = out["launch_type"].map(_LAUNCH_TYPES).fillna("unknown")
    out["device_launched"] = out["device_launched"].astype(bool)
    for column in ("graph_id", "graph_node_id", "queued_ns", "on_timeline"):
        out[column] = rows[column]
    out["replayed"] = ~out["on_timeline"]
    return out


def _api_calls(db: sqlite3.Connection, strings: np.ndarray) -> pd.DataFrame:
    c = _integer_columns(db, "CUPTI_ACTIVITY_KIND_RUNTIME", _API_ROW_COLUMNS)
    return pd.DataFrame({
        "start_ns": c["start_ns"], "end_ns": c["end_ns"], "duration_ns": c["end_ns"] - c["start_ns"],
        "name": strings[c["name_id"]], "domain": np.where(c["event_class"] == 1, "driver", "runtime").astype(object),
        "pid": c["global_tid"] // 0x1000000 % 0x1000000, "tid": c["global_tid"] % 0x1000000,
        "correlation_id": c["correlation_id"], "return_code": c["return_code"]})

_BOOLEAN = {"on_timeline", "async", "batch"}


@dataclass
class Trace:
    """A trace's records as DataFrames (every one exists, with its columns, also when empty)."""

    path: str
    session_start_ns: int = 0
    session: dict[str, str] = field(default_factory=dict)  # META_DATA_EXPORT: cuscope's session facts
    truncated_bytes: int = 0
    corruption: str | None = None
    chunks: int = 0
    stats: dict[str, int] = field(default_factory=dict)
    frames: dict[int, str] = field(default_factory=dict)  # stack id -> its frames, innermost first
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={len(df)}" for name, df in self.tables.items())
        return f"Trace({self.path!r}, {counts}, truncated_bytes={self.truncated_bytes})"


def _frame_text(row: Any) -> str:
    """A frame as cuscope's tables name it: "function (module)" (mangled), "module+0xOFFSET", or a
    Python frame "qualified.name (file.py:LINE)"."""
    if row.source_file:
        file = row.source_file.rsplit("/", 1)[-1]
        return f"{row.function} ({file}:{int(row.line)})" if pd.notna(row.line) else f"{row.function} ({file})"
    module = (row.module or "").rsplit("/", 1)[-1]
    return f"{row.function} ({module})" if row.function else f"{module}+0x{int(row.module_offset or 0):x}"


def read_sqlite(path: str | os.PathLike[str]) -> Trace:
    """Reads a database written by ``cuscope export --format sqlite``."""
    name = os.fspath(path)
    if not Path(name).is_file():
        raise FileNotFoundError(f"{name}: No such file")
    with contextlib.closing(sqlite3.connect(Path(name).resolve().as_uri() + "?mode=ro", uri=True)) as db:
        # A trace's strings are the program's bytes: a name that is not UTF-8 reads with U+FFFD.
        db.text_factory = lambda b: b.decode("utf-8", "replace")
        try:
            meta = dict(db.execute("SELECT name, value FROM META_DATA_EXPORT").fetchall())
        except sqlite3.DatabaseError as e:  # not SQLite, or a database of something else
            raise ValueError(f"{name}: not a database written by cuscope export --format sqlite ({e})") from e
        if "CUSCOPE_SESSION_START_CUPTI_NS" not in meta:
            raise ValueError(f"{name}: not a database written by cuscope export --format sqlite")
        trace = Trace(path=meta.get("CUSCOPE_SOURCE_TRACE", name), session=meta)
        trace.session_start_ns = int(meta["CUSCOPE_SESSION_START_CUPTI_NS"])
        trace.truncated_bytes = int(meta.get("CUSCOPE_TRUNCATED_BYTES", 0))
        trace.corruption = meta.get("CUSCOPE_CORRUPTION")
        trace.chunks = int(meta.get("CUSCOPE_CHUNKS", 0))
        for key, stat in (("CUSCOPE_RECORDS_WRITTEN", "records_written"),
                          ("CUSCOPE_RECORDS_DROPPED_BY_CUPTI", "records_dropped_by_cupti")):
            if key in meta:
                trace.stats[stat] = int(meta[key])
        ids = db.execute("SELECT id, value FROM StringIds ORDER BY id").fetchall()
        strings = np.empty(len(ids) + 1, dtype=object)  # by id; 0: none
        strings[0] = ""
        for i, value in ids:
            strings[i] = value
        trace.tables["kernels"] = _kernels(db, strings)
        trace.tables["api_calls"] = _api_calls(db, strings)
        for table, sql in _QUERIES.items():
            df = pd.read_sql_query(sql, db)
            for column in _BOOLEAN & set(df.columns):
                df[column] = df[column].astype(bool)
            trace.tables[table] = df
        frames = pd.read_sql_query(
            """SELECT f.stackId AS stack, f.depth, m.value AS module, f.moduleOffset AS module_offset,
                 coalesce(fn.value, '') AS function, sf.value AS source_file, f.line
               FROM CUSCOPE_STACK_FRAMES f LEFT JOIN StringIds m ON m.id = f.moduleId
                 LEFT JOIN StringIds fn ON fn.id = f.functionId LEFT JOIN StringIds sf ON sf.id = f.sourceFileId
               ORDER BY f.stackId, f.depth""", db)
    for stack, rows in frames.groupby("stack"):
        trace.frames[int(stack)] = " <- ".join(_frame_text(r) for r in rows.itertuples())
    for table in ("launch_stacks", "graph_nodes"):
        df = trace.tables[table]
        df["frames"] = df["stack"].map(trace.frames).fillna("")
    return trace


def read_trace(path: str | os.PathLike[str], cuscope_binary: str | None = None, findings: bool = True) -> Trace:
    """Reads a cuscope trace: ``cuscope export --format sqlite`` into a temporary file, then
    ``read_sqlite``. ``findings=False`` skips the analyzer (an empty ``findings`` DataFrame).

    Raises ValueError naming the file when it is not a cuscope trace (or of a newer format),
    FileNotFoundError when it does not exist, RuntimeError when the command cannot run or fails.
    """
    name = os.fspath(path)
    binary = cuscope_binary or default_binary()
    with tempfile.TemporaryDirectory(prefix="cuscope-") as scratch:
        db = os.path.join(scratch, "trace.sqlite")
        command = [binary, "export", "--format", "sqlite", "-o", db, name]
        if not findings:
            command.insert(2, "--no-findings")
        try:
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as e:
            raise RuntimeError(f"cannot run {binary!r} (set CUSCOPE_CLI or pass cuscope_binary): {e}") from e
        if result.returncode != 0:
            message = result.stderr.strip().removeprefix("cuscope: ")
            if "No such file" in message:
                raise FileNotFoundError(message)
            if "not a cuscope trace" in message or "format version" in message or "no header" in message:
                raise ValueError(message)
            raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}: {message}")
        trace = read_sqlite(db)
    trace.path = name
    return trace
