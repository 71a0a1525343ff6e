"""Runs the ``cuscope`` command line tool for what only it computes (the analyzer's findings)."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any


def default_binary() -> str:
    """The cuscope command to run: $CUSCOPE_CLI when set, else ``cuscope`` from PATH."""
    return os.environ.get("CUSCOPE_CLI") or "cuscope"


def analyze(path: str | os.PathLike[str], cuscope_binary: str | None = None) -> dict[str, Any]:
    """Runs ``cuscope analyze --format json PATH`` and returns the report as a dict.

    The dict follows ``proto/cuscope/v1/report.proto`` in its JSON form (``findings``, ``summary``,
    ``tables``, ...; 64-bit integers are strings there). Raises RuntimeError, with the command's
    stderr, when the command cannot be run, fails, or prints something that is not JSON.
    """
    binary = cuscope_binary or default_binary()
    command = [binary, "analyze", "--format", "json", os.fspath(path)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as e:  # not found, not executable
        raise RuntimeError(f"cannot run {binary!r} (set CUSCOPE_CLI or pass cuscope_binary): {e}") from e
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}: {result.stderr.strip()}")
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"{' '.join(command)} printed no JSON report: {e}; stderr: {result.stderr.strip()}") from e
    if not isinstance(report, dict):
        raise RuntimeError(f"{' '.join(command)} printed JSON that is not a report object")
    return report
