#!/usr/bin/env bash
# Builds what the GPU machine runs into build-device/ (Release, no debug info, sm_90 only) and
# copies the shared libraries it lacks there (abseil, protobuf) into build-device/lib, so the
# folder travels whole. Then run scripts/gpu_suite.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCUSCOPE_WERROR=ON >/dev/null
cmake --build build-device -j"$(nproc)"
for lib in $(ldd build-device/lib/libcuscope.so build-device/bin/cuscope build-device/bin/collector_gpu_test 2>/dev/null |
             awk '/libabsl|libprotobuf/ {print $3}' | sort -u); do
  cp -L "$lib" build-device/lib/
done
rm -rf build-device/CMakeFiles build-device/*/CMakeFiles build-device/*/*/CMakeFiles
find build-device -name '*.a' -delete -o -name '*.o' -delete
du -sh build-device
