"""Reads a cuscope trace file (proto/cuscope/v1/trace.proto) into pandas DataFrames.

A trace is the magic ``CUSCOPE\\n``, then blocks: a varint byte length and a serialized ``Block``.
The first block holds the ``Header``, every later one a ``Chunk``. This reader decodes them as
cuscope's own reader does (lib/core/trace_reader.cc and lib/core/record_codec/): interned
definitions are file-wide ids, dense from 1, each defined once before its first use; times in a
chunk are relative to ``Chunk.base_time_ns``; column-encoded records (kernels, API calls, counter
series) store each start and correlation id as the difference to the previous row; an empty
optional column means zero on every row. A file cut at any byte yields every complete block, and
the cut tail is counted; a block that does not decode ends the read, keeping what came before.
"""

from __future__ import annotations

import itertools
import operator
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError

try:
    from cuscope.v1 import trace_pb2
except ImportError as e:  # the generated modules are build output
    raise ImportError(
        "cuscope.v1.trace_pb2 is missing: install the package (pip install ./python), or run "
        "'python3 python/generate_protos.py DIR' and put DIR on sys.path"
    ) from e

MAGIC = b"CUSCOPE\n"
FORMAT_VERSION = 1  # the newest version this reader knows
MAX_BLOCK_BYTES = 512 << 20  # a longer length prefix can only be damage (lib/core/trace_format.h)
STUCK_CORRELATION_KERNELS = 100  # lib/analysis/timeline.h kStuckCorrelationKernels
_U64 = (1 << 64) - 1

# The columns of each DataFrame, in order; ":s" marks text, ":b" booleans, ":f" floats, the rest
# are integers. The types matter only for an empty table, which still has every column.
_SPAN = "start_ns end_ns duration_ns"
_SHAPE = "grid_x grid_y grid_z block_x block_y block_z"
_SCHEMAS = {
    "kernels": f"{_SPAN} name:s device context stream correlation_id {_SHAPE} registers_per_thread "
    "static_shared_memory dynamic_shared_memory local_memory_per_thread shared_memory_executed launch_type:s "
    "cluster_x cluster_y cluster_z device_launched:b graph_id graph_node_id flags replayed:b on_timeline:b queued_ns",
    "api_calls": f"{_SPAN} name:s domain:s callback_id pid tid correlation_id return_code",
    "memcpys": f"{_SPAN} copy_kind:s src_kind:s dst_kind:s bytes device context stream correlation_id async:b "
    "graph_id graph_node_id",
    "memsets": f"{_SPAN} bytes value memory_kind:s device context stream correlation_id async:b graph_id graph_node_id",
    "synchronizations": f"{_SPAN} type:s context stream event correlation_id",
    "nvtx": f"{_SPAN} kind:s name:s domain:s pid tid id",
    "memory_operations": "time_ns type:s memory_kind:s bytes address device context stream correlation_id async:b",
    "overheads": f"{_SPAN} kind:s pid tid correlation_id",
    "metrics": f"correlation_id device kernel_name:s {_SHAPE} pass_count replay_mode:s metric:s value:f",
    "counters": f"device source:s name:s {_SPAN} value:f",
    "windows": "kind:s start_ns end_ns reason:s end_reason:s",
    "top_down": f"time_ns rank name:s device {_SHAPE} total_ns launches window_kernel_ns",
    "launch_stacks": "correlation_id stack frames:s",
    "graph_nodes": "node_id stack original_node_id created_ns pid tid frames:s",
}
_DTYPES = {"s": "object", "b": "bool", "f": "float64", "": "int64"}
# Kernel columns that come from the launch's interned KernelSignature (besides name, launch_type).
_SIGNATURE_FIELDS = ("device", "context", *_SHAPE.split(), "registers_per_thread", "static_shared_memory",
                     "dynamic_shared_memory", "local_memory_per_thread", "shared_memory_executed", "cluster_x",
                     "cluster_y", "cluster_z", "device_launched")
# Metric row columns repeated from the KernelMetrics record for each of its values.
_METRIC_FIELDS = ("correlation_id", "device", "kernel_name", *_SHAPE.split(), "pass_count", "replay_mode")
_THREAD = {"pid": operator.attrgetter("pid"), "tid": operator.attrgetter("tid")}


def _enum(enum: Any, prefix: str) -> dict[int, str]:
    """An enum's values by number, as short lower-case names (COPY_KIND_HTOD -> "htod")."""
    return {number: name.removeprefix(prefix).lower() for name, number in enum.items()}


_ENUMS = {
    "launch_type": _enum(trace_pb2.LaunchType, "LAUNCH_TYPE_"),
    "domain": _enum(trace_pb2.ApiDomain, "API_DOMAIN_"),
    "copy_kind": _enum(trace_pb2.CopyKind, "COPY_KIND_"),
    "memory_kind": _enum(trace_pb2.MemoryKind, "MEMORY_KIND_"),
    "sync_type": _enum(trace_pb2.SyncType, "SYNC_TYPE_"),
    "memory_operation": _enum(trace_pb2.MemoryOperationType, "MEMORY_OPERATION_"),
    "replay_mode": _enum(trace_pb2.ReplayMode, "REPLAY_MODE_"),
    "window_kind": _enum(trace_pb2.WindowKind, "WINDOW_KIND_"),
    "counter_source": _enum(trace_pb2.CounterSource, "COUNTER_SOURCE_"),
}


def _name(value: int, enum: str) -> str:
    """An enum number's name; a number this reader does not know stays visible as its digits."""
    return _ENUMS[enum].get(value, str(value))


def _names(values: Iterable[int], enum: str) -> list[str]:
    return [_name(v, enum) for v in values]


class CorruptTrace(ValueError):
    """A block that does not decode or breaks the format's rules (only a damaged file has one)."""


@dataclass(repr=False)
class Trace:
    """A whole trace: the header, one DataFrame per record kind, and how the read went.

    Times are absolute CUPTI nanoseconds (CLOCK_REALTIME on Linux); names are resolved from the
    interned strings. ``truncated_bytes`` counts the bytes of a cut tail that were dropped;
    ``corruption`` says why reading stopped early at a damaged block (None when it did not).
    """

    path: str
    header: Any  # cuscope.v1.Header
    truncated_bytes: int = 0
    corruption: str | None = None
    chunks: int = 0
    kernels: pd.DataFrame = field(default_factory=pd.DataFrame)
    api_calls: pd.DataFrame = field(default_factory=pd.DataFrame)
    memcpys: pd.DataFrame = field(default_factory=pd.DataFrame)
    memsets: pd.DataFrame = field(default_factory=pd.DataFrame)
    synchronizations: pd.DataFrame = field(default_factory=pd.DataFrame)
    nvtx: pd.DataFrame = field(default_factory=pd.DataFrame)
    memory_operations: pd.DataFrame = field(default_factory=pd.DataFrame)
    overheads: pd.DataFrame = field(default_factory=pd.DataFrame)
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    counters: pd.DataFrame = field(default_factory=pd.DataFrame)
    windows: pd.DataFrame = field(default_factory=pd.DataFrame)
    top_down: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Call stacks (--stacks): each sampled launch's (join kernels on correlation_id), and each CUDA
    # graph node's creating stack or the node it was cloned from (kernels' graph_node_id). `frames`
    # is the stack innermost first, "function (module)" (mangled) or "module+0xOFFSET", " <- " apart.
    launch_stacks: pd.DataFrame = field(default_factory=pd.DataFrame)
    graph_nodes: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Monitor mode's figures per interval, as the protobuf messages (cuscope.v1.MonitorInterval).
    monitor_intervals: list[Any] = field(default_factory=list)
    # The last chunk's CaptureStats (the session's running totals), field name -> value.
    stats: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={len(getattr(self, name))}" for name in _SCHEMAS)
        return f"Trace({self.path!r}, {counts}, truncated_bytes={self.truncated_bytes})"


def _undelta(deltas: Iterable[int], origin: int) -> list[int]:
    """Undoes a delta column: row i is origin plus the first i+1 deltas, modulo 2**64 as in C++."""
    values = itertools.accumulate(deltas, initial=origin)
    next(values)
    out = list(values)
    if out and (min(out) < 0 or max(out) > _U64):
        out = [v & _U64 for v in out]
    return out


def _optional(column: Any, rows: int) -> list[int]:
    """An optional column's values: stored, or zero on every row when the column is empty."""
    return list(column) if len(column) else [0] * rows


def _define(table: list[Any], id_: int, value: Any, what: str) -> None:
    """Appends an interned definition, which must take the next free id (dictionary.cc)."""
    if id_ != len(table):
        raise CorruptTrace(f"{what} id {id_} defined out of order (expected {len(table)})")
    table.append(value)


def _lookup(ids: Iterable[int], table: list[Any], columns: dict[str, Callable[[Any], Any]]) -> dict[str, np.ndarray]:
    """Per row, attributes of the definition each id names; an undefined id gets slot 0's defaults."""
    index = np.fromiter(ids, dtype=np.int64)
    index[(index < 0) | (index >= len(table))] = 0
    return {name: np.array([get(d) for d in table], dtype=object)[index] for name, get in columns.items()}


def _frame(table: str, data: dict[str, Any]) -> pd.DataFrame:
    """A DataFrame with the table's columns in order, typed even when it has no rows."""
    columns = [c.partition(":") for c in _SCHEMAS[table].split()]
    if not len(data.get(columns[0][0], ())):
        return pd.DataFrame({name: pd.Series(dtype=_DTYPES[kind]) for name, _, kind in columns})
    frame = pd.DataFrame({name: data[name] for name, _, _ in columns})
    for name, _, kind in columns:  # columns looked up from definitions come as object arrays
        if frame[name].dtype == object and kind != "s":
            frame[name] = frame[name].astype(_DTYPES[kind])
    return frame


class _Block:
    """Splits a trace's bytes into block payloads, framed as lib/core/trace_format.cc writes them."""

    def __init__(self, data: bytes, pos: int) -> None:
        self.view = memoryview(data)
        self.pos = pos
        self.dropped = 0

    def next(self) -> memoryview | None:
        """The next block's payload; None at the end, counting a cut tail in ``dropped``."""
        data, start = self.view, self.pos
        length = shift = 0
        p = start
        while True:
            if p >= len(data):  # the end, or a cut inside the length prefix
                return self._cut()
            byte = data[p]
            p += 1
            if shift == 63 and byte > 1:
                raise CorruptTrace(f"bad block length at byte {start}")
            length |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        if length > MAX_BLOCK_BYTES:
            raise CorruptTrace(f"block of {length} bytes at byte {start} exceeds the limit")
        if p + length > len(data):  # a cut inside the block
            return self._cut()
        self.pos = p + length
        return data[p : self.pos]

    def _cut(self) -> None:
        self.dropped = len(self.view) - self.pos
        self.pos = len(self.view)
        return None


class _Rows:
    """The interned definitions and the rows of every chunk read so far, as plain column lists."""

    def __init__(self) -> None:
        # Slot 0 of each table holds the defaults an undefined id resolves to.
        self.strings: list[str] = [""]
        self.signatures: list[Any] = [trace_pb2.KernelSignature()]
        self.functions: list[Any] = [trace_pb2.ApiFunction()]
        self.threads: list[Any] = [trace_pb2.HostThread()]
        self.stack_frames: list[Any] = [trace_pb2.StackFrame()]
        self.call_stacks: list[Any] = [trace_pb2.CallStack()]
        self.columns: dict[str, defaultdict[str, list[Any]]] = {t: defaultdict(list) for t in _SCHEMAS}
        self.nvtx_markers: list[Any] = []
        self.windows: list[Any] = []
        self.monitor_intervals: list[Any] = []
        self.stats: dict[str, int] = {}

    def add(self, chunk: Any) -> None:
        """Adds one chunk: checked whole first, so that a damaged chunk adds nothing."""
        self._check(chunk)
        for s in chunk.strings:
            _define(self.strings, s.id, s.value, "string")
        for s in chunk.kernel_signatures:
            _define(self.signatures, s.id, s, "kernel signature")
        for f in chunk.api_functions:
            _define(self.functions, f.id, f, "API function")
        for t in chunk.threads:
            _define(self.threads, t.id, t, "thread")
        for f in chunk.stack_frames:
            # Every frame names its module (a Python frame: its file, as source_file does).
            if f.module == 0 or max(f.module, f.function, f.source_file) >= len(self.strings):
                raise CorruptTrace(f"stack frame {f.id} names an undefined string")
            _define(self.stack_frames, f.id, f, "stack frame")
        for s in chunk.call_stacks:
            if not s.frames or any(not 0 < f < len(self.stack_frames) for f in s.frames):
                raise CorruptTrace(f"call stack {s.id} is empty or names an undefined frame")
            _define(self.call_stacks, s.id, s, "call stack")
        base = chunk.base_time_ns
        cols = self.columns

        k, out = chunk.kernels, cols["kernels"]
        self._span_columns(k, base, out)
        out["signature"] += k.signature
        out["stream"] += k.stream
        for name in ("graph_id", "graph_node_id", "flags", "queued_lead"):
            out[name] += _optional(getattr(k, name), len(k.start_delta))

        a, out = chunk.api_calls, cols["api_calls"]
        self._span_columns(a, base, out)
        out["function"] += a.function
        out["thread"] += a.thread
        out["return_code"] += _optional(a.return_code, len(a.start_delta))

        shared = ("bytes", "device", "context", "stream", "correlation_id", "async", "graph_id", "graph_node_id")
        self._messages(chunk.memcpys, base, cols["memcpys"], ("copy_kind", "src_kind", "dst_kind", *shared))
        self._messages(chunk.memsets, base, cols["memsets"], ("value", "memory_kind", *shared))
        self._messages(chunk.synchronizations, base, cols["synchronizations"],
                       ("type", "context", "stream", "event", "correlation_id"))
        self._messages(chunk.overheads, base, cols["overheads"], ("kind", "thread", "correlation_id"))
        out = cols["memory_operations"]
        out["time_ns"] += [(base + m.time) & _U64 for m in chunk.memory_operations]
        self._fields(chunk.memory_operations, out, ("type", "memory_kind", "bytes", "address", "device", "context",
                                                    "stream", "correlation_id", "async"))
        self.nvtx_markers += [((base + m.time) & _U64, m) for m in chunk.nvtx_markers]

        out = cols["metrics"]
        for m in chunk.kernel_metrics:
            for v in m.values:
                for name in _METRIC_FIELDS:
                    out[name].append(getattr(m, name))
                out["metric"].append(v.name)
                out["value"].append(v.value)

        out = cols["counters"]
        for series in chunk.counter_series:
            n = len(series.start_delta)
            starts = _undelta(series.start_delta, base)
            durations = _optional(series.duration, n)
            out["start_ns"] += starts
            out["duration_ns"] += durations
            out["end_ns"] += map(operator.add, starts, durations)
            out["value"] += series.value
            for name in ("device", "source", "name"):
                out[name] += [getattr(series, name)] * n

        self.windows += chunk.windows
        if chunk.HasField("top_down"):
            td, out = chunk.top_down, cols["top_down"]
            for rank, hot in enumerate(td.kernels):
                for name in ("name", "device", *_SHAPE.split(), "total_ns", "launches"):
                    out[name].append(getattr(hot, name))
                out["time_ns"].append(td.time_ns)
                out["rank"].append(rank)
                out["window_kernel_ns"].append(td.window_kernel_ns)
        out = cols["launch_stacks"]
        for ls in chunk.launch_stacks:
            if not 0 < ls.stack < len(self.call_stacks):
                raise CorruptTrace(f"a launch names undefined call stack {ls.stack}")
            out["correlation_id"].append(ls.correlation_id)
            out["stack"].append(ls.stack)
        out = cols["graph_nodes"]
        for g in chunk.graph_node_stacks:
            if (g.stack == 0) == (g.original_node_id == 0) or g.stack >= len(self.call_stacks) or \
                    g.thread >= len(self.threads):
                raise CorruptTrace(f"graph node {g.node_id} is damaged")
            for name in ("node_id", "stack", "original_node_id", "created_ns", "thread"):
                out[name].append(getattr(g, name))
        self.monitor_intervals += chunk.monitor_intervals
        if chunk.HasField("stats"):
            self.stats = {f.name: getattr(chunk.stats, f.name) for f in chunk.stats.DESCRIPTOR.fields}

    @staticmethod
    def _check(chunk: Any) -> None:
        """The column-encoded messages have one entry per row in every non-empty column."""
        checks = [
            ("kernel", chunk.kernels, ("duration", "signature", "stream", "correlation_delta"),
             ("graph_id", "graph_node_id", "flags", "queued_lead")),
            ("API call", chunk.api_calls, ("duration", "function", "thread", "correlation_delta"), ("return_code",)),
        ]
        checks += [("counter", s, ("value",), ("duration",)) for s in chunk.counter_series]
        for what, message, required, optional in checks:
            n = len(message.start_delta)
            if any(len(getattr(message, c)) != n for c in required) or any(
                len(getattr(message, c)) not in (0, n) for c in optional
            ):
                raise CorruptTrace(f"{what} columns of chunk {chunk.sequence} differ in length")

    @staticmethod
    def _span_columns(message: Any, base: int, out: dict[str, list[Any]]) -> None:
        """Starts, ends, durations and correlation ids of a column-encoded message (columns.h)."""
        starts = _undelta(message.start_delta, base)
        out["start_ns"] += starts
        out["duration_ns"] += message.duration
        out["end_ns"] += map(operator.add, starts, message.duration)
        out["correlation_id"] += _undelta(message.correlation_delta, 0)

    @classmethod
    def _messages(cls, messages: Any, base: int, out: dict[str, list[Any]], names: tuple[str, ...]) -> None:
        """Rows of a message-per-record kind: its span (start relative to the chunk) and fields."""
        starts = [(base + m.start) & _U64 for m in messages]
        durations = [m.duration for m in messages]
        out["start_ns"] += starts
        out["duration_ns"] += durations
        out["end_ns"] += map(operator.add, starts, durations)
        cls._fields(messages, out, names)

    @staticmethod
    def _fields(messages: Any, out: dict[str, list[Any]], names: Iterable[str]) -> None:
        for name in names:
            out[name] += [getattr(m, name) for m in messages]

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table as a DataFrame, with ids resolved to names, threads and enum names."""
        cols, text, string = self.columns, self._text, self._string

        k = cols["kernels"]
        signature = {f: operator.attrgetter(f) for f in _SIGNATURE_FIELDS}
        signature["name"] = lambda s: string(s.name)
        signature["launch_type"] = lambda s: _name(s.launch_type, "launch_type")
        k.update(_lookup(k.pop("signature", []), self.signatures, signature))
        k["replayed"] = [bool(f & trace_pb2.KERNEL_FLAG_REPLAYED) for f in k["flags"]]
        k["on_timeline"] = _on_timeline(k, cols["metrics"]["correlation_id"])
        # When the host queued the launch (latency timestamps), 0 when the session did not record it.
        k["queued_ns"] = [start - lead if lead else 0 for start, lead in zip(k["start_ns"], k.pop("queued_lead", []))]

        a = cols["api_calls"]
        function = {"name": lambda f: string(f.name), "domain": lambda f: _name(f.domain, "domain"),
                    "callback_id": operator.attrgetter("callback_id")}
        a.update(_lookup(a.pop("function", []), self.functions, function))
        a.update(_lookup(a.pop("thread", []), self.threads, _THREAD))

        for table, enums in (("memcpys", {"copy_kind": "copy_kind", "src_kind": "memory_kind",
                                          "dst_kind": "memory_kind"}),
                             ("memsets", {"memory_kind": "memory_kind"}),
                             ("synchronizations", {"type": "sync_type"}),
                             ("memory_operations", {"type": "memory_operation", "memory_kind": "memory_kind"}),
                             ("metrics", {"replay_mode": "replay_mode"}),
                             ("counters", {"source": "counter_source"})):
            for column, enum in enums.items():
                cols[table][column] = _names(cols[table][column], enum)

        o = cols["overheads"]
        o["kind"] = text(o["kind"])
        o.update(_lookup(o.pop("thread", []), self.threads, _THREAD))
        m = cols["metrics"]
        m["kernel_name"], m["metric"] = text(m["kernel_name"]), text(m["metric"])
        cols["counters"]["name"] = text(cols["counters"]["name"])
        cols["top_down"]["name"] = text(cols["top_down"]["name"])
        cols["nvtx"] = self._nvtx()
        cols["windows"] = self._windows()
        cols["launch_stacks"]["frames"] = [self._stack_text(s) for s in cols["launch_stacks"]["stack"]]
        g = cols["graph_nodes"]
        g["frames"] = [self._stack_text(s) for s in g["stack"]]
        g.update(_lookup(g.pop("thread", []), self.threads, _THREAD))

        return {table: _frame(table, data) for table, data in cols.items()}

    def _frame_text(self, id_: int) -> str:
        """One frame as cuscope's tables name it (the function left mangled); a Python frame as
        "qualified.name (file.py:LINE)"."""
        f = self.stack_frames[id_]
        if f.source_file:
            file = self._string(f.source_file).rsplit("/", 1)[-1]
            return f"{self._string(f.function)} ({file}:{f.line})" if f.line else f"{self._string(f.function)} ({file})"
        module = self._string(f.module).rsplit("/", 1)[-1]
        return f"{self._string(f.function)} ({module})" if f.function else f"{module}+0x{f.module_offset:x}"

    def _stack_text(self, id_: int) -> str:
        """A call stack's frames, innermost first ("" for none)."""
        return " <- ".join(self._frame_text(f) for f in self.call_stacks[id_].frames) if id_ else ""

    def _string(self, id_: int) -> str:
        """An interned string by id ("" for 0, which means none, or for an undefined id)."""
        return self.strings[id_] if id_ < len(self.strings) else ""

    def _text(self, ids: Iterable[int]) -> list[str]:
        return [self._string(i) for i in ids]

    def _nvtx(self) -> dict[str, list[Any]]:
        """NVTX rows: each mark, and each range whose start and end records (sharing an id) were
        both read, with the start's name, domain and thread; as lib/analysis/timeline.cc pairs them."""
        rows: list[tuple[int, int, str, Any]] = []
        open_ranges: dict[int, tuple[int, Any]] = {}
        for time, m in self.nvtx_markers:
            if m.kind == trace_pb2.NVTX_KIND_MARK:
                rows.append((time, time, "mark", m))
            elif m.kind == trace_pb2.NVTX_KIND_RANGE_START:
                open_ranges[m.id] = (time, m)
            elif m.kind == trace_pb2.NVTX_KIND_RANGE_END and m.id in open_ranges:
                start, first = open_ranges.pop(m.id)
                rows.append((start, max(start, time), "range", first))
        rows.sort(key=operator.itemgetter(0))
        out: dict[str, Any] = {
            "start_ns": [r[0] for r in rows],
            "end_ns": [r[1] for r in rows],
            "duration_ns": [r[1] - r[0] for r in rows],
            "kind": [r[2] for r in rows],
            "name": self._text(r[3].name for r in rows),
            "domain": self._text(r[3].domain for r in rows),
            "id": [r[3].id for r in rows],
        }
        out.update(_lookup((r[3].thread for r in rows), self.threads, _THREAD))
        return out

    def _windows(self) -> dict[str, list[Any]]:
        """Capture windows, whole: the collector writes a window at once, or as an opening half
        (end 0) and a later closing half (start 0) of the same kind, paired innermost first as
        lib/analysis/timeline.cc CaptureWindowSet pairs them. A window still open when the trace
        ended keeps end_ns 0; one whose opening half is not in the trace has start_ns 0."""
        done: list[tuple[int, int, int, str, str]] = []
        open_halves: dict[int, list[Any]] = defaultdict(list)
        for w in self.windows:
            if w.start_ns and w.end_ns:
                done.append((w.kind, w.start_ns, w.end_ns, w.reason, w.reason))
            elif w.start_ns:
                open_halves[w.kind].append(w)
            elif w.end_ns:
                opening = open_halves[w.kind].pop() if open_halves[w.kind] else trace_pb2.CaptureWindow()
                done.append((w.kind, opening.start_ns, w.end_ns, opening.reason, w.reason))
        done += [(w.kind, w.start_ns, 0, w.reason, "") for halves in open_halves.values() for w in halves]
        done.sort(key=operator.itemgetter(1))
        names = ("kind", "start_ns", "end_ns", "reason", "end_reason")
        out = {name: [row[i] for row in done] for i, name in enumerate(names)}
        out["kind"] = _names(out["kind"], "window_kind")
        return out


def _on_timeline(kernels: dict[str, list[Any]], profiled_ids: Iterable[int]) -> list[bool]:
    """Whether each launch is the program's own, as cuscope's tables count kernels
    (lib/analysis/timeline.h Replayed): a launch is replayed for metrics when flagged so or when a
    metrics row has its correlation id, except that a "stuck" id (one CUPTI gave to most kernels,
    at least 100 and more than half of those with an id, CUDA graph kernels left out: they share
    their graph launch's id by design) ties nothing: its kernels that have a duration stay on the
    timeline."""
    counts = Counter(c for c, g in zip(kernels["correlation_id"], kernels["graph_id"]) if c != 0 and g == 0)
    stuck = None
    if counts:
        most = max(counts.values())
        if most >= STUCK_CORRELATION_KERNELS and 2 * most > sum(counts.values()):
            stuck = min(c for c, n in counts.items() if n == most)
    profiled = set(profiled_ids) - {0, stuck}
    rows = zip(kernels["correlation_id"], kernels["replayed"], kernels["start_ns"], kernels["end_ns"])
    return [not ((flagged or c in profiled) and not (c == stuck and end > start)) for c, flagged, start, end in rows]


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Reads a whole cuscope trace file into a ``Trace``.

    Raises ValueError naming the file when it is not a cuscope trace (bad magic, no header) or
    has a format version this reader does not know; OSError when it cannot be read.
    """
    name = os.fspath(path)
    data = Path(path).read_bytes()
    if data[: len(MAGIC)] != MAGIC:
        raise ValueError(f"{name}: not a cuscope trace (bad magic)")
    blocks = _Block(data, len(MAGIC))
    try:
        payload = blocks.next()
        block = trace_pb2.Block.FromString(payload) if payload is not None else None
    except (CorruptTrace, DecodeError) as e:
        raise ValueError(f"{name}: not a cuscope trace ({e})") from e
    if block is None or not block.HasField("header") or block.header.format_version == 0:
        raise ValueError(f"{name}: not a cuscope trace (no header)")
    version = block.header.format_version
    if version > FORMAT_VERSION:
        raise ValueError(f"{name}: trace format version {version} is newer than this reader knows ({FORMAT_VERSION})")
    trace = Trace(path=name, header=block.header)
    rows = _Rows()
    while True:
        offset = blocks.pos
        try:
            payload = blocks.next()
            if payload is None:
                break
            try:
                block = trace_pb2.Block.FromString(payload)
            except DecodeError:
                raise CorruptTrace(f"block at byte {offset} does not decode") from None
            if block.HasField("header"):
                raise CorruptTrace(f"second header at byte {offset}")
            if not block.HasField("chunk"):
                continue  # a block kind newer than this reader
            rows.add(block.chunk)
        except CorruptTrace as e:
            trace.corruption = f"corrupt trace: {e}"
            break
        trace.chunks += 1
    trace.truncated_bytes = blocks.dropped
    for table, frame in rows.frames().items():
        setattr(trace, table, frame)
    trace.monitor_intervals = rows.monitor_intervals
    trace.stats = rows.stats
    return trace
