#!/usr/bin/env bash
# Packs what the GPU machine runs into build-device/: the build's bin/, lib/, examples/ and
# bench/ (Release, no debug info, sm_90 device code), plus the shared libraries the GPU machine
# lacks (abseil, protobuf), so the folder travels whole. Then, there: scripts/gpu_suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90
rm -rf build-device
mkdir -p build-device
mkdir -p build-device/lib build-device/examples build-device/bench
cp -a build/bin build-device/
cp -a build/lib/libcuscope.so* build-device/lib/
cp -a build/examples/example_* build-device/examples/
cp -a build/bench/launch_overhead_bench build/bench/libbare_cupti_injection.so build-device/bench/
for lib in $(ldd build/lib/libcuscope.so build/bin/cuscope build/bin/collector_gpu_test 2>/dev/null |
             awk '/libabsl|libprotobuf/ {print $3}' | sort -u); do
  cp -L "$lib" build-device/lib/
done
du -sh build-device
