#!/usr/bin/env bash
# Lean collection against every call: each example and its fixed twin profiled three times, with
# the default kinds (lean: only the runtime and driver calls the analyzer reads), with `-t all`
# (every call) and with the light set `-t kernel,memcpy,memset,nvtx,overhead` (no API call and no
# synchronization record: what CUPTI records without intercepting the program's calls); prints the
# top findings and whether lean and light agree with all. On the GPU machine, from the repository
# root, after scripts/build_for_device.sh:  scripts/lean_check.sh [OUT_DIR] (B=DIR: another build folder)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results/lean}
mkdir -p "$out"
B=${B:-$PWD/build-device}
cli="$B/bin/cuscope"
# The first finding's rule id and headline, or "healthy".
top_finding() {
  "$cli" analyze --format json "$1" 2>/dev/null |
    python3 -c 'import json,sys; f=json.load(sys.stdin).get("findings",[]); print(f[0]["rule_id"]+": "+f[0]["headline"] if f else "healthy")'
}
rule_of() { echo "${1%%:*}"; }
agree=0; differ=0; light_agree=0; light_differ=0
check() {
  local name=$1; shift
  local tag
  tag="${name}$(echo "$*" | tr -c 'a-z0-9' '_')"
  "$cli" profile -q -f -o "$out/${tag}_lean" -- "$B/examples/example_$name" "$@" >/dev/null 2>&1
  "$cli" profile -q -f -t all -o "$out/${tag}_all" -- "$B/examples/example_$name" "$@" >/dev/null 2>&1
  "$cli" profile -q -f -t kernel,memcpy,memset,nvtx,overhead -o "$out/${tag}_light" -- "$B/examples/example_$name" "$@" \
    >/dev/null 2>&1
  local lean all light
  lean=$(top_finding "$out/${tag}_lean.cuscope")
  all=$(top_finding "$out/${tag}_all.cuscope")
  light=$(top_finding "$out/${tag}_light.cuscope")
  local verdict=DIFFERENT light_verdict=DIFFERENT
  if [ "$(rule_of "$lean")" = "$(rule_of "$all")" ]; then verdict=same; agree=$((agree + 1)); else differ=$((differ + 1)); fi
  if [ "$(rule_of "$light")" = "$(rule_of "$all")" ]; then
    light_verdict=same; light_agree=$((light_agree + 1))
  else
    light_differ=$((light_differ + 1))
  fi
  printf -- "-- %s %s: lean %s, light %s\n   lean:  %s\n   all:   %s\n   light: %s\n   size lean %s B, all %s B, light %s B\n" \
    "$name" "$*" "$verdict" "$light_verdict" "$lean" "$all" "$light" \
    "$(stat -c %s "$out/${tag}_lean.cuscope")" "$(stat -c %s "$out/${tag}_all.cuscope")" \
    "$(stat -c %s "$out/${tag}_light.cuscope")"
}
for ex in launch_overhead sync_every_step pageable_copies legacy_default_stream event_wait_stall; do
  check "$ex"
  if [ "$ex" = launch_overhead ]; then check "$ex" --fixed=fused; check "$ex" --fixed=graph
  else check "$ex" --fixed; fi
done
echo "lean vs all: $agree same top finding, $differ different"
echo "light vs all: $light_agree same top finding, $light_differ different"
