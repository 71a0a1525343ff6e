#!/usr/bin/env python3
"""Generates the protobuf modules of the trace format (``cuscope/v1/*_pb2.py``) with ``protoc``.

The ``_pb2`` modules are build output, never checked in: ``setup.py`` runs this when the package
is built, and a checkout used without installing runs it once by hand::

    python3 python/generate_protos.py OUT_DIR        # then: PYTHONPATH=python:OUT_DIR

The modules land in ``OUT_DIR/cuscope/v1/``; the ``cuscope`` package extends its search path over
every ``cuscope`` folder on ``sys.path``, so they are found next to the sources. Only the standard
library is used here, so that this runs before the package can be imported.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The repository's proto folder, as seen from this file (python/ sits beside proto/).
DEFAULT_PROTO_ROOT = Path(__file__).resolve().parent.parent / "proto"


def find_protoc() -> str:
    """The protoc to run: $PROTOC when set, else the one on PATH, else Debian's."""
    for candidate in (os.environ.get("PROTOC"), shutil.which("protoc"), "/usr/bin/protoc"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise RuntimeError("protoc not found: install it (Debian: apt-get install protobuf-compiler) or set PROTOC")


def generate(out_dir: str | os.PathLike[str], proto_root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Compiles every ``cuscope/v1/*.proto`` under ``proto_root`` into ``out_dir``.

    Returns the generated module paths. ``out_dir/cuscope/v1/__init__.py`` is written so that the
    folder is a regular subpackage; ``out_dir/cuscope/__init__.py`` is not, so that the folder
    never shadows the real package.
    """
    root = Path(proto_root) if proto_root is not None else DEFAULT_PROTO_ROOT
    protos = sorted((root / "cuscope" / "v1").glob("*.proto"))
    if not protos:
        raise RuntimeError(f"no .proto files under {root / 'cuscope' / 'v1'}")
    out = Path(out_dir)
    package = out / "cuscope" / "v1"
    package.mkdir(parents=True, exist_ok=True)
    command = [find_protoc(), f"-I{root}", f"--python_out={out}", *(str(p) for p in protos)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    (package / "__init__.py").touch()
    return [package / f"{p.stem}_pb2.py" for p in protos]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="folder that receives cuscope/v1/*_pb2.py")
    parser.add_argument("--proto-root", default=None, help=f"folder holding cuscope/v1/*.proto ({DEFAULT_PROTO_ROOT})")
    args = parser.parse_args(argv)
    for path in generate(args.out_dir, args.proto_root):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
