#!/usr/bin/env bash
# Packs what the GPU machine runs into build-device/: the build's bin/, lib/, examples/ and
# bench/ (Release, no debug info, sm_90 device code), so the folder travels whole: the binaries
# carry their own abseil and protobuf. Then, there: scripts/gpu_suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90
rm -rf build-device
mkdir -p build-device
mkdir -p build-device/lib build-device/examples build-device/bench
# Only what the GPU machine runs: each binary carries its own static abseil and protobuf now, so
# the whole bin/ would not travel.
mkdir -p build-device/bin
for b in cuscope collector_gpu_test gpu_counters_gpu_test session_options_test protobuf_host \
         fault_app replay_app; do
  [ -e "build/bin/$b" ] && cp -a "build/bin/$b" build-device/bin/
done
cp -a build/lib/libcuscope.so* build/lib/libbacktrace_on_crash.so build-device/lib/
# The unwinder --stacks loads, beside libcuscope.so, for a GPU machine without libunwind8.
# And what the CLI loads for native source lines (elfutils' libdw and libelf), for one without them.
# (awk reads ldconfig's whole output: leaving early would end ldconfig with SIGPIPE, which
# pipefail and -e turn into this script's end.)
for so in libunwind.so.8 libdw.so.1 libelf.so.1; do
  path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ && !found { print $NF; found = 1 }')
  if [ -n "$path" ]; then cp -L "$path" "build-device/lib/$so"; fi
done
cp -a build/examples/example_* build-device/examples/
cp -a build/bench/launch_overhead_bench build/bench/libbare_cupti_injection.so build/bench/request_scope_cost \
  build-device/bench/
# The examples keep their line tables (built with -g1), so that their launch sites read
# `main (launch_overhead.cu:NN)` there too.
strip --strip-unneeded build-device/bin/* build-device/bench/* \
  "$(readlink -f build-device/lib/libcuscope.so)" 2>/dev/null || true
du -sh build-device
