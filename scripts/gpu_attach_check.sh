#!/usr/bin/env bash
# cuscope attach on the GPU (docs/capture_and_attach.md, "Attach to a running process"): a PyTorch loop and the
# inference server, each started without cuscope, attached after 5 s of work, looked at (status),
# captured (2 s) and detached, against the same programs never attached: output and exit code the
# same, how long the attach stopped a thread, the captured trace analyzed, and what the session cost
# (steps per second of each second: attached runs against plain ones, interleaved rounds).
#
# On the GPU machine, from the repository root, with build-device/ (scripts/build_for_device.sh):
#   scripts/gpu_attach_check.sh [--rounds N] [--out DIR]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
rounds=3 out=${OUT:-/tmp}/attach profiler_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --profiler-only) profiler_only=1 ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "gpu_attach_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
B=${B:-$PWD/build-device}
C=$B/bin/cuscope
S=$B/examples/example_inference_server
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
export CUSCOPE_LIBRARY="$B/lib/libcuscope.so"
mkdir -p "$out"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# One attached run of a program: attach after 5 s, status, a 2 s capture, detach; its output.
attached() {  # name, command...
  local name=$1; shift
  "$@" > "$out/$name.out" 2> "$out/$name.err" &
  local pid=$!
  sleep 5
  "$C" attach --pid "$pid" --mode monitor -o "$out/${name}_monitor" 2>&1 | tee "$out/$name.attach"
  grep -q "attached to process" "$out/$name.attach" || fail "$name: attach"
  "$C" status --pid "$pid" > "$out/$name.status" 2>&1 || fail "$name: status"
  # Never twice.
  if "$C" attach --pid "$pid" > "$out/$name.again" 2>&1; then fail "$name: attached twice"; fi
  grep -q "already has a cuscope session" "$out/$name.again" || fail "$name: second attach not refused as such"
  "$C" capture --pid "$pid" --duration 2 -o "$out/${name}_capture" -f 2>&1 | tail -1
  "$C" detach --pid "$pid" 2>&1 | tail -1
  wait "$pid"
  echo "$?" > "$out/$name.code"
}
plain() {  # name, command...
  local name=$1; shift
  "$@" > "$out/$name.out" 2> "$out/$name.err"
  echo "$?" > "$out/$name.code"
}

# A process whose CUPTI is taken (torch.profiler running): refused with the reason, the target
# left to finish with its own output (docs/capture_and_attach.md, "Attach").
echo "== torch.profiler running in the process: refused"
python3 examples/torch_attach_target.py --seconds 8 --profiler > "$out/profiled.out" 2> "$out/profiled.err" &
pid=$!
# Attach once the loop runs inside the profiler ("ready"), not while Python still imports torch.
for _ in $(seq 120); do grep -q ready "$out/profiled.out" 2>/dev/null && break; sleep 0.5; done
if "$C" attach --pid "$pid" > "$out/profiled.attach" 2>&1; then fail "attached beside torch.profiler"; fi
grep -q "another CUPTI tool" "$out/profiled.attach" || fail "the refusal does not name another CUPTI tool"
cat "$out/profiled.attach"
grep -h "cuscope:\|CUPTI" "$out/profiled.err" | head -4
wait "$pid" || fail "the profiled process ended with $?"
grep checksum "$out/profiled.out" || fail "the profiled process printed no checksum"
[ "$profiler_only" = 1 ] && { echo "attach check: $failures failure(s)"; exit $((failures > 0)); }

torch_cmd=(python3 examples/torch_attach_target.py --seconds 14)
server_cmd=("$S" --workers 2 --duration 12 --warmup 1 --cuscope off)
for r in $(seq 1 "$rounds"); do
  for v in plain attached; do
    echo "== round $r: torch $v"
    $v "torch_${v}_$r" "${torch_cmd[@]}"
    echo "== round $r: server $v"
    $v "server_${v}_$r" "${server_cmd[@]}"
  done
  # The first round's attach failing will fail the others too: say so now, not in minutes.
  if [ "$failures" -gt 0 ]; then
    cat "$out"/*_attached_1.attach "$out"/torch_attached_1.err 2>/dev/null | tail -20
    echo "attach check: $failures failure(s) in round 1, stopped"
    exit 1
  fi
done

echo "== the first attached runs"
cat "$out/torch_attached_1.attach" "$out/torch_attached_1.again" "$out/server_attached_1.attach"
grep -h "cuscope:" "$out/torch_attached_1.err" "$out/server_attached_1.err" | head -8
sed -n '1,30p' "$out/torch_attached_1.status"
"$C" analyze "$out/torch_attached_1_capture.cuscope" 2>&1 | sed -n '1,25p'
"$C" analyze "$out/server_attached_1_capture.cuscope" 2>&1 | sed -n '1,12p'
"$C" dump "$out/torch_attached_1_capture.cuscope" 2>/dev/null | grep -m3 -i "entry\|attach"

python3 - "$out" "$rounds" <<'PY' || failures=$((failures + 1))
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ok = True
def read(name):
    return open(f"{out}/{name}").read()
for prog in ("torch", "server"):
    for r in range(1, rounds + 1):
        p, a = read(f"{prog}_plain_{r}.out"), read(f"{prog}_attached_{r}.out")
        pc, ac = read(f"{prog}_plain_{r}.code").strip(), read(f"{prog}_attached_{r}.code").strip()
        key = "checksum" if prog == "torch" else "checksum="
        ps = [l for l in p.splitlines() if key in l]
        as_ = [l for l in a.splitlines() if key in l]
        same = ps == as_ and pc == ac == "0"
        ok &= same
        print(f"  {prog} round {r}: exit {pc} / {ac}, {ps[-1] if ps else '?'} / {as_[-1] if as_ else '?'}: {'same' if same else 'DIFFERENT'}")
stops = []
for prog in ("torch", "server"):
    for r in range(1, rounds + 1):
        m = re.search(r"stopped for ([0-9.]+) ms", read(f"{prog}_attached_{r}.attach"))
        if m: stops.append((prog, float(m.group(1))))
print("  thread stopped at attach (ms):", ", ".join(f"{p} {s:.3f}" for p, s in stops))
def bins(text):
    return {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"second (\d+) steps (\d+)", text)}
# torch: steps per second before the attach (s 2-4), while attached (s 7-10: after the capture's start too),
# against the plain runs' same seconds.
for v in ("plain", "attached"):
    before, during = [], []
    for r in range(1, rounds + 1):
        b = bins(read(f"torch_{v}_{r}.out"))
        before += [b[s] for s in range(2, 5) if s in b]
        during += [b[s] for s in range(7, 11) if s in b]
    print(f"  torch {v:8s}: steps/s seconds 2-4 median {statistics.median(before):.0f} (spread {min(before)}-{max(before)}), "
          f"seconds 7-10 median {statistics.median(during):.0f} (spread {min(during)}-{max(during)})")
for v in ("plain", "attached"):
    t = []
    for r in range(1, rounds + 1):
        m = re.search(r"throughput=([0-9.]+)", read(f"server_{v}_{r}.out"))
        if m: t.append(float(m.group(1)))
    if t: print(f"  server {v:8s}: throughput median {statistics.median(t):.1f} req/s (spread {min(t):.1f}-{max(t):.1f})")
sys.exit(0 if ok else 1)
PY
echo "attach check: $failures failure(s)"
exit $((failures > 0))
