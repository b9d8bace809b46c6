#!/usr/bin/env bash
# bench/ab.sh - paired before/after of two switchboard builds: both servers up at once (same
# flags, two ports), the same oha load sent to each in turn, rounds alternating the order
# (ABBA), so both builds see the same machine noise. Every ratio goal of bench/run.sh divides
# an sb-* row by a peer row measured once, so a goal's change before -> after is the change of
# the sb row itself: after ÷ before here.
#
#   SB_BEFORE=/path/old SB=/path/new bench/ab.sh      # ~REPS x 2 x DUR per load
#
# LOADS (default "message-unary task-unary task-stream sqlite-unary"):
#   message-unary  --agent echo-message, memory store, SendMessage        (goal a)
#   task-unary     --agent echo-task, memory store, SendMessage           (goal b)
#   task-stream    --agent echo-task, memory store, SendStreamingMessage  (goal d)
#   sqlite-unary   --agent echo-task, a fresh SQLite file each, SendMessage (goal c)
#   pg-unary       --agent echo-task, a throwaway PostgreSQL cluster each (bench/pg.sh start,
#                  ports PG_PORT_A/PG_PORT_B, default 7391/7392), SendMessage (run.sh's sb-task-pg)
# SB_BEFORE_ARGS / SB_ARGS: extra `serve` flags per side; SB_BEFORE_ENV / SB_ENV: extra
# VAR=value words per side (bench/observe.sh: one build, observability off vs on).
# REPS=5 DUR=5 WARM=2 CONC=64. Loopback only; loads bounded by -z and `timeout`; only the
# servers started here are stopped.
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BENCH=$(cd "$(dirname "$0")" && pwd)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
SB_BEFORE=${SB_BEFORE:?set SB_BEFORE to the other build}
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
REPS=${REPS:-5} DUR=${DUR:-5} WARM=${WARM:-2} CONC=${CONC:-64}
PORT_A=${PORT_A:-7311} PORT_B=${PORT_B:-7312}
LOADS=${LOADS:-"message-unary task-unary task-stream sqlite-unary"}
OUT=${OUT:-$BENCH/out/results/ab-$(date +%Y%m%d-%H%M%S)}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
HOST=127.0.0.1
for p in "$PORT_A" "$PORT_B"; do
  if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then echo "port $p on $HOST is in use" >&2; exit 1; fi
done
mkdir -p "$OUT"
UNARY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
STREAM='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
PID_A="" PID_B=""
PG_PORT_A=${PG_PORT_A:-7391} PG_PORT_B=${PG_PORT_B:-7392}
stop() {
  for p in $PID_A $PID_B; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; PID_A="" PID_B=""
  for side in before after; do [ -d "$OUT/pg-$side" ] && "$BENCH/pg.sh" stop "$OUT/pg-$side"; done; true
}
trap stop EXIT
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

start() {  # start <build: before|after> <port> <load>: prints the PID
  local bin=$SB store=memory agent=echo-task args=${SB_ARGS:-} envs=${SB_ENV:-}
  [ "$1" = before ] && { bin=$SB_BEFORE; args=${SB_BEFORE_ARGS:-}; envs=${SB_BEFORE_ENV:-}; }
  case $3 in
    message-*) agent=echo-message ;;
    sqlite-*) rm -f "$OUT/$1.db"*; store="sqlite://$OUT/$1.db" ;;
    pg-*) local pg_port=$PG_PORT_A; [ "$1" = after ] && pg_port=$PG_PORT_B
          store=$("$BENCH/pg.sh" start "$OUT/pg-$1" "$pg_port") ;;
  esac
  # shellcheck disable=SC2086 # the extra words split on purpose
  env SWITCHBOARD_LOG=warn $envs "$bin" serve --listen "$HOST:$2" --store "$store" --agent "$agent" $args >>"$OUT/serve-$1.log" 2>&1 &
  echo $!
}
printf 'load\tbuild\tround\t%s\n' "$(python3 "$BENCH/oha_row.py" --header)" >"$OUT/runs.tsv"
{ echo "date: $(date -Is)"; echo "loadavg at start: $(cat /proc/loadavg)"
  echo "settings: REPS=$REPS DUR=${DUR}s WARM=${WARM}s CONC=$CONC LOADS=$LOADS"
  echo "extra: before [${SB_BEFORE_ENV:-} ${SB_BEFORE_ARGS:-}] after [${SB_ENV:-} ${SB_ARGS:-}]"
  echo "after: $SB ($(stat -c '%y' "$SB" | cut -d. -f1)); before: $SB_BEFORE ($(stat -c '%y' "$SB_BEFORE" | cut -d. -f1)) ${SB_BEFORE_REV:-}"; } | tee "$OUT/env.txt"
for load in $LOADS; do
  PID_A=$(start before "$PORT_A" "$load"); PID_B=$(start after "$PORT_B" "$load")
  for p in "$PORT_A" "$PORT_B"; do
    for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://$HOST:$p/.well-known/agent-card.json" 2>/dev/null && break; sleep 0.1; done
  done
  body=$UNARY; case $load in *-stream) body=$STREAM ;; esac
  run() {  # run <build> <round> <oha bound...>
    local b=$1 r=$2 port=$PORT_A pid=$PID_A c0 c1 t0 t1; shift 2
    [ "$b" = after ] && { port=$PORT_B; pid=$PID_B; }
    c0=$(cpu_ticks "$pid"); t0=$(date +%s.%N)
    timeout 90 "$OHA" --no-tui --output-format json -m POST -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
      -d "$body" "$@" "http://$HOST:$port/" >"$OUT/$load.$b.$r.json"
    c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
    python3 "$BENCH/oha_row.py" "$OUT/$load.$b.$r.json" "$c0" "$c1" "$hz" "$t0" "$t1" "$load" "$b" "$r" >>"$OUT/runs.tsv"
  }
  run before warm -z "${WARM}s" -c "$CONC"; run after warm -z "${WARM}s" -c "$CONC"
  for r in $(seq 1 "$REPS"); do
    if [ $(( r % 2 )) = 1 ]; then order=(before after); else order=(after before); fi
    for b in "${order[@]}"; do run "$b" "$r" -z "${DUR}s" -c "$CONC"; done
  done
  stop
done
echo "loadavg at end: $(cat /proc/loadavg)" | tee -a "$OUT/env.txt"
python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(f'{sys.argv[1]}/runs.tsv'), delimiter='\t') if r['round'] != 'warm']
med = statistics.median
print('| load | before req/s | after req/s | after ÷ before per round | median | change | CPU µs/req before | after | failed |')
print('|---|---:|---:|---|---:|---:|---:|---:|---:|')
for load in dict.fromkeys(r['load'] for r in rows):
    g = lambda b, k: [float(r[k]) for r in rows if r['load'] == load and r['build'] == b]
    rounds = sorted({r['round'] for r in rows if r['load'] == load}, key=int)
    per = []
    for x in rounds:
        a = next(float(r['req_s']) for r in rows if r['load'] == load and r['build'] == 'after' and r['round'] == x)
        b = next(float(r['req_s']) for r in rows if r['load'] == load and r['build'] == 'before' and r['round'] == x)
        per.append(a / b)
    m = med(per)
    bad = sum(int(r['failed']) for r in rows if r['load'] == load)
    print(f"| {load} | {med(g('before', 'req_s')):,.0f} | {med(g('after', 'req_s')):,.0f} | {' '.join(f'{p:.2f}' for p in per)} "
          f"| {m:.3f} | {100 * (m - 1):+.1f} % | {med(g('before', 'server_cpu_us_per_req')):.1f} "
          f"| {med(g('after', 'server_cpu_us_per_req')):.1f} | {bad} |")
PY
echo "results: $OUT"
