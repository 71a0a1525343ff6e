#!/usr/bin/env bash
# The main job: installs what is missing, builds, then shows cuscope at work.
# With a GPU it profiles a bundled example program and prints what it recorded; without one it
# says so and analyzes a trace recorded on an H200 that ships in traces/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
cli=build/bin/cuscope
if grep -q "^GPU 0:" <<<"$("$cli" info)"; then
  "$cli" info
  out=$(mktemp -d)/known_work
  echo "== cuscope profile -o $out.cuscope -- build/examples/example_known_work"
  "$cli" profile -o "$out" -- build/examples/example_known_work
  trace="$out.cuscope"
else
  "$cli" info
  trace=traces/h200_known_work.cuscope
  echo "== No GPU here: showing $trace, recorded on an NVIDIA H200 with"
  echo "   cuscope profile -o h200_known_work -- build/examples/example_known_work"
fi
echo "== cuscope dump --limit 12 $trace"
"$cli" dump --limit 12 "$trace"
echo "== cuscope stats --report cuda_gpu_kern_sum,cuda_api_sum $trace"
"$cli" stats --report cuda_gpu_kern_sum,cuda_api_sum "$trace"
echo "== cuscope analyze $trace"
"$cli" analyze "$trace"
