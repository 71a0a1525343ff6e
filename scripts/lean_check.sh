#!/usr/bin/env bash
# Lean collection against every call: each example and its fixed twin profiled twice, with the
# default kinds (lean: only the runtime and driver calls the analyzer reads) and with `-t all`
# (every call); prints both top findings and whether they agree. On the GPU machine, from the
# repository root, after scripts/build_for_device.sh:  scripts/lean_check.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results/lean}
mkdir -p "$out"
B=$PWD/build-device
cli="$B/bin/cuscope"
# The first finding's rule id and headline, or "healthy".
top_finding() {
  "$cli" analyze --format json "$1" 2>/dev/null |
    python3 -c 'import json,sys; f=json.load(sys.stdin).get("findings",[]); print(f[0]["rule_id"]+": "+f[0]["headline"] if f else "healthy")'
}
rule_of() { echo "${1%%:*}"; }
agree=0; differ=0
check() {
  local name=$1; shift
  local tag
  tag="${name}$(echo "$*" | tr -c 'a-z0-9' '_')"
  "$cli" profile -q -f -o "$out/${tag}_lean" -- "$B/examples/example_$name" "$@" >/dev/null 2>&1
  "$cli" profile -q -f -t all -o "$out/${tag}_all" -- "$B/examples/example_$name" "$@" >/dev/null 2>&1
  local lean all
  lean=$(top_finding "$out/${tag}_lean.cuscope")
  all=$(top_finding "$out/${tag}_all.cuscope")
  local verdict=DIFFERENT
  if [ "$(rule_of "$lean")" = "$(rule_of "$all")" ]; then verdict=same; agree=$((agree + 1)); else differ=$((differ + 1)); fi
  printf -- "-- %s %s: %s\n   lean: %s\n   all:  %s\n   size lean %s B, all %s B\n" "$name" "$*" "$verdict" "$lean" "$all" \
    "$(stat -c %s "$out/${tag}_lean.cuscope")" "$(stat -c %s "$out/${tag}_all.cuscope")"
}
for ex in launch_overhead sync_every_step pageable_copies legacy_default_stream event_wait_stall; do
  check "$ex"
  if [ "$ex" = launch_overhead ]; then check "$ex" --fixed=fused; check "$ex" --fixed=graph
  else check "$ex" --fixed; fi
done
echo "lean vs all: $agree same top finding, $differ different"
