"""cuscope traces in pandas: ``read_trace`` reads a trace (through ``cuscope export --format sqlite``),
``read_sqlite`` such a database, ``analyze`` asks the ``cuscope`` command for its findings. The
package needs pandas and the ``cuscope`` command; nothing else."""

from cuscope.cli import analyze
from cuscope.reader import Trace, read_sqlite, read_trace

__all__ = ["Trace", "analyze", "read_sqlite", "read_trace"]
