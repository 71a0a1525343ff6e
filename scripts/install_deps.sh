#!/usr/bin/env bash
# Installs the Debian packages cuscope builds with, if any is missing. Needs root (or sudo).
set -euo pipefail
packages=(cmake g++ make libprotobuf-dev protobuf-compiler libabsl-dev libre2-dev libgtest-dev libbenchmark-dev
          dpkg-dev unicode-data python3 perl
          python3-pandas python3-pytest  # the Python package (python/) and its tests
          libsqlite3-dev  # SQLite, for `cuscope export --format sqlite`
          nlohmann-json3-dev  # the JSON writer (lib/core/json.h)
          libcli11-dev  # CLI11 (header-only), the argument parser of the cuscope command's options
          libpython3-dev  # an embedded CPython, for the test of the Python frame reader
          libdw-dev  # elfutils' DWARF reader (its header; the CLI loads libdw.so.1 when present) for native source lines
          libunwind8  # the unwinder --stacks loads at run time (libunwind.so.8); without it, libgcc's
          prometheus  # the Prometheus server, for the test that scrapes the metrics endpoint
          clang-14 libclang-rt-14-dev)  # the sanitized build and the fuzzers (scripts/asan_build.sh)
missing=()
for p in "${packages[@]}"; do
  grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# build_private_deps.sh asks apt which civetweb and prometheus-cpp it offers: apt's lists are needed.
if ((${#missing[@]})) || ! apt-cache show prometheus-cpp-dev >/dev/null 2>&1; then
  $SUDO apt-get update -qq
fi
if ((${#missing[@]})); then
  echo "cuscope: installing ${missing[*]}"
  # Debian's prometheus package would start its daemon where services can start; the test runs
  # its own server on a free port, so one running on 9090 is harmless.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "cuscope: no CUDA Toolkit found: building the analyzer only (the collector needs CUDA's CUPTI)"
else
  # The collector library carries its own hidden copies of these (the script says why).
  "$(dirname "$0")/build_private_deps.sh"
fi
