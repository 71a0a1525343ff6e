"""cuscope traces in pandas: ``read_trace`` decodes a trace file into DataFrames, ``analyze`` asks
the ``cuscope`` command for its findings.

The protobuf modules (``cuscope.v1.*_pb2``) are generated when the package is built. A checkout
used without installing generates them into a folder of its own (``python/generate_protos.py``);
the package path is extended over every ``cuscope`` folder on ``sys.path`` so that they are found
there too.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from cuscope.cli import analyze  # noqa: E402
from cuscope.reader import FORMAT_VERSION, Trace, read_trace  # noqa: E402

__all__ = ["FORMAT_VERSION", "Trace", "analyze", "read_trace"]
