#!/usr/bin/env bash
# Installs the Debian packages cuscope builds with, if any is missing. Needs root (or sudo).
set -euo pipefail
packages=(cmake g++ make libprotobuf-dev protobuf-compiler libabsl-dev libre2-dev libgtest-dev libbenchmark-dev
          dpkg-dev unicode-data python3 perl)
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
else
  # The collector library carries its own hidden copies of these (the script says why).
  "$(dirname "$0")/build_private_deps.sh"
fi
