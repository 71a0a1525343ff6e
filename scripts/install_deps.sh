#!/usr/bin/env bash
# Installs the Debian packages cuscope builds with, if any is missing. Needs root (or sudo).
set -euo pipefail
packages=(cmake g++ make libprotobuf-dev protobuf-compiler libabsl-dev libgtest-dev libbenchmark-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "cuscope: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "cuscope: no CUDA Toolkit found: building the analyzer only (the collector needs CUDA's CUPTI)"
fi
