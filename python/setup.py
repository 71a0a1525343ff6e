"""Builds the cuscope package, generating its protobuf modules from ../proto with protoc.

The ``cuscope.v1.*_pb2`` modules are build output: ``build_py`` runs ``generate_protos.py`` into
the build folder, so that they are installed with the package and never checked in.
"""

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_protos import generate  # noqa: E402


class BuildPyWithProtos(build_py):
    """build_py that also writes cuscope/v1/*_pb2.py into the build folder."""

    def run(self) -> None:
        super().run()
        if not self.dry_run:
            generate(self.build_lib)


setup(cmdclass={"build_py": BuildPyWithProtos})
