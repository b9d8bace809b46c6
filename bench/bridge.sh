#!/usr/bin/env bash
# bench/bridge.sh - what `switchboard bridge` costs: the same AG-UI run (a RunAgentInput POSTed,
# the whole SSE answer read) (a) straight from `serve`'s own /agui (the hosted backend: no
# network hop) and (b) through `switchboard bridge` in front of that serve (the remote backend:
# JSON-RPC + SSE over loopback), rounds alternating the order (ABBA) so both see the same noise.
#
#   SB=/path/to/switchboard bench/bridge.sh        # ~REPS x 2 x DUR, plus warm-ups
#
# Prints, per mode: runs/s, CPU µs per run of the process that does the AG-UI work (serve in
# (a), the bridge in (b); from /proc/<pid>/stat utime+stime around each oha run), that per AG-UI
# event (the events of one run counted with curl), serve's CPU µs per run in (b) too, and
# latency p50/p99. The bridge's overhead per run is its own CPU per run; per event, that divided
# by the events of a run.
#
# AGENT (default echo-task: submitted, an artifact, completed; `demo` streams more events per
# run) REPS=5 DUR=5 WARM=2 CONC=16 PORT_SERVE=7321 PORT_BRIDGE=7322. Loopback only; loads
# bounded by -z and `timeout`; only the processes started here are stopped.
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BENCH=$(cd "$(dirname "$0")" && pwd)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
REPS=${REPS:-5} DUR=${DUR:-5} WARM=${WARM:-2} CONC=${CONC:-16}
AGENT=${AGENT:-echo-task}
PORT_SERVE=${PORT_SERVE:-7321} PORT_BRIDGE=${PORT_BRIDGE:-7322}
OUT=${OUT:-$BENCH/out/results/bridge-$(date +%Y%m%d-%H%M%S)}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
HOST=127.0.0.1
for p in "$PORT_SERVE" "$PORT_BRIDGE"; do
  if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then echo "port $p on $HOST is in use" >&2; exit 1; fi
done
mkdir -p "$OUT"
BODY='{"threadId":"bench-thread","runId":"bench-run","messages":[{"id":"u1","role":"user","content":"hello world"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}'
SERVE_PID="" BRIDGE_PID=""
stop() { for p in $BRIDGE_PID $SERVE_PID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; SERVE_PID="" BRIDGE_PID=""; }
trap stop EXIT
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
wait_port() { for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }

SWITCHBOARD_LOG=warn "$SB" serve --listen "$HOST:$PORT_SERVE" --store memory --agent "$AGENT" >>"$OUT/serve.log" 2>&1 &
SERVE_PID=$!
wait_port "$PORT_SERVE"
SWITCHBOARD_BRIDGE_LOG=warn "$SB" bridge --agent "http://$HOST:$PORT_SERVE" --listen "$HOST:$PORT_BRIDGE" >>"$OUT/bridge.log" 2>&1 &
BRIDGE_PID=$!
wait_port "$PORT_BRIDGE"

url() { if [ "$1" = direct ]; then echo "http://$HOST:$PORT_SERVE/agui"; else echo "http://$HOST:$PORT_BRIDGE/agui"; fi; }
# The events of one run, per mode (the two must agree: same converter, same agent).
for mode in direct bridge; do
  curl -fsS -m 30 -X POST -H 'Content-Type: application/json' -d "$BODY" "$(url $mode)" >"$OUT/one-run.$mode.sse"
  grep -c '^data:' "$OUT/one-run.$mode.sse" >"$OUT/events.$mode"
  tail -n 2 "$OUT/one-run.$mode.sse" | grep -q '"RUN_FINISHED"' || { echo "$mode: the run did not finish" >&2; exit 1; }
done

{ echo "date: $(date -Is)"; echo "loadavg at start: $(cat /proc/loadavg)"
  echo "settings: REPS=$REPS DUR=${DUR}s WARM=${WARM}s CONC=$CONC AGENT=$AGENT"
  echo "build: $SB ($(stat -c '%y' "$SB" | cut -d. -f1))"
  echo "events per run: direct $(cat "$OUT/events.direct"), bridge $(cat "$OUT/events.bridge")"; } | tee "$OUT/env.txt"
printf 'mode\tround\t%s\tserve_cpu_us_per_run\n' "$(python3 "$BENCH/oha_row.py" --header)" >"$OUT/runs.tsv"
run() {  # run <direct|bridge> <round> <oha bound...>
  local mode=$1 r=$2 pid=$SERVE_PID c0 c1 s0 s1 t0 t1 row; shift 2
  [ "$mode" = bridge ] && pid=$BRIDGE_PID
  c0=$(cpu_ticks "$pid"); s0=$(cpu_ticks "$SERVE_PID"); t0=$(date +%s.%N)
  timeout 90 "$OHA" --no-tui --output-format json -m POST -H 'Content-Type: application/json' \
    -d "$BODY" "$@" "$(url "$mode")" >"$OUT/$mode.$r.json"
  c1=$(cpu_ticks "$pid"); s1=$(cpu_ticks "$SERVE_PID"); t1=$(date +%s.%N)
  row=$(python3 "$BENCH/oha_row.py" "$OUT/$mode.$r.json" "$c0" "$c1" "$hz" "$t0" "$t1" "$mode" "$r")
  # Serve's CPU per run too (in `direct` the same as the measured process's).
  python3 - "$OUT/$mode.$r.json" "$s0" "$s1" "$hz" "$row" >>"$OUT/runs.tsv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = (d.get('statusCodeDistribution') or {}).get('200', 0)
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4])
print(f"{sys.argv[5]}\t{1e6 * cpu / ok if ok else 0:.1f}")
PY
}
run direct warm -z "${WARM}s" -c "$CONC"; run bridge warm -z "${WARM}s" -c "$CONC"
for r in $(seq 1 "$REPS"); do
  if [ $(( r % 2 )) = 1 ]; then order=(direct bridge); else order=(bridge direct); fi
  for m in "${order[@]}"; do run "$m" "$r" -z "${DUR}s" -c "$CONC"; done
done
stop
echo "loadavg at end: $(cat /proc/loadavg)" | tee -a "$OUT/env.txt"
python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import csv, json, statistics, sys
out = sys.argv[1]
rows = [r for r in csv.DictReader(open(f'{out}/runs.tsv'), delimiter='\t') if r['round'] != 'warm']
med = statistics.median
events = {m: int(open(f'{out}/events.{m}').read()) for m in ('direct', 'bridge')}
def p99(m, rnd):
    return (json.load(open(f'{out}/{m}.{rnd}.json'))['latencyPercentiles']['p99'] or 0) * 1e3
print('| mode | events/run | runs/s | CPU µs/run (AG-UI process) | CPU µs/event | serve CPU µs/run | p50 ms | p99 ms | failed |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for m in ('direct', 'bridge'):
    g = lambda k: [float(r[k]) for r in rows if r['mode'] == m]
    cpu = med(g('server_cpu_us_per_req'))
    lat99 = med([p99(m, r['round']) for r in rows if r['mode'] == m])
    bad = sum(int(r['failed']) for r in rows if r['mode'] == m)
    print(f"| {m} | {events[m]} | {med(g('req_s')):,.0f} | {cpu:.1f} | {cpu / events[m]:.2f} "
          f"| {med(g('serve_cpu_us_per_run')):.1f} | {med(g('p50_ms')):.2f} | {lat99:.2f} | {bad} |")
per = []
for rnd in sorted({r['round'] for r in rows}, key=int):
    s = {r['mode']: float(r['req_s']) for r in rows if r['round'] == rnd}
    per.append(s['bridge'] / s['direct'])
print(f"\nbridge ÷ direct runs/s per round: {' '.join(f'{p:.2f}' for p in per)} (median {med(per):.3f})")
PY
echo "results: $OUT"
