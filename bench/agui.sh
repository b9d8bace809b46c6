#!/usr/bin/env bash
# bench/agui.sh - what AG-UI costs on a stream: the same streaming SendStreamingMessage load
# (JSON-RPC, echo-task agent, CONC connections, oha reading every stream to its end) against
# ONE `switchboard serve`, once as plain A2A SSE and once opted in to AG-UI 1.0. Goal (issue
# "agui"): AG-UI streams/s at least 0.9x the plain A2A streams/s (the AG-UI path costs < 10 %).
#
#   bench/agui.sh            # ~1.5 min: REPS=5 DUR=5 CONC=64 KINDS="plain agui"
#
# Kinds (the request body and URL are the same; only the opt-in differs):
#   plain       Accept: text/event-stream            -> A2A frames (task, artifactUpdate, statusUpdate)
#   agui        Accept: application/x-agui-events    -> AG-UI events (RUN_STARTED ... RUN_FINISHED)
#   agui-query  POST /?format=agui                   -> the same, opted in by the query
# Each round runs every kind once, the order reversed every other round (ABBA), so drift and
# the other processes on the machine hit both alike; the table reports medians, the server's
# CPU time per stream (the figure that does not depend on how 2 cores split between server
# and oha) and the per-round ratios. Before the loads, one stream of each kind is checked
# (A2A: a JSON-RPC result; AG-UI: RUN_STARTED first, RUN_FINISHED last).
#
# Loopback only; every load is bounded by -z and wrapped in `timeout`; only the server started
# here is stopped.
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BENCH=$(cd "$(dirname "$0")" && pwd)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
REPS=${REPS:-5}
DUR=${DUR:-5}
WARM=${WARM:-2}
CONC=${CONC:-64}
N1=${N1:-300}
PORT=${PORT:-7304}
KINDS=${KINDS:-"plain agui"}
OUT=${OUT:-$BENCH/out/results/agui-$(date +%Y%m%d-%H%M%S)}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
for f in "$SB" "$OHA"; do [ -x "$f" ] || { echo "missing $f - run bench/setup.sh first" >&2; exit 1; }; done
HOST=127.0.0.1
BASE=http://$HOST:$PORT
if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then echo "port $PORT on $HOST is in use" >&2; exit 1; fi
mkdir -p "$OUT"
BODY='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'

SWITCHBOARD_LOG=warn "$SB" serve --listen "$HOST:$PORT" --store memory --agent echo-task >"$OUT/serve.log" 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null || true; wait $SPID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fsS -o /dev/null "$BASE/.well-known/agent-card.json" 2>/dev/null && break; sleep 0.1; done

# url/accept of a kind
url() { case $1 in agui-query) echo "$BASE/?format=agui" ;; *) echo "$BASE/" ;; esac; }
accept() { case $1 in agui) echo 'application/x-agui-events' ;; *) echo 'text/event-stream' ;; esac; }

# The answers must be what each kind asks for.
for k in $KINDS; do
  curl -fsS -N --max-time 10 -D "$OUT/$k.headers.txt" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -H "Accept: $(accept "$k")" -d "$BODY" "$(url "$k")" >"$OUT/$k.stream.txt"
  case $k in
    plain) grep -q '"result"' "$OUT/$k.stream.txt" && ! grep -q 'RUN_STARTED' "$OUT/$k.stream.txt" ||
             { echo "plain stream is not A2A:" >&2; cat "$OUT/$k.stream.txt" >&2; exit 1; } ;;
    *) python3 - "$OUT/$k.stream.txt" <<'PY' || exit 1
import json, sys
evs = [json.loads(l[5:]) for l in open(sys.argv[1]).read().splitlines() if l.startswith('data:')]
types = [e.get('type') for e in evs]
if not types or types[0] != 'RUN_STARTED' or types[-1] != 'RUN_FINISHED':
    sys.exit(f'not an AG-UI run: {types}')
PY
       ;;
  esac
  echo "$k: $(grep -c '^data:' "$OUT/$k.stream.txt") events, $(wc -c <"$OUT/$k.stream.txt") bytes; $(grep -i '^content-type' "$OUT/$k.headers.txt" | tr -d '\r')" | tee -a "$OUT/checks.txt"
done

cpu_ticks() { awk '{print $14+$15}' "/proc/$SPID/stat"; }
hz=$(getconf CLK_TCK)
# load <kind> <tag> <oha bound args...>: one oha run; appends a row to runs.tsv
load() {
  local k=$1 tag=$2; shift 2
  local c0 c1 t0 t1
  c0=$(cpu_ticks); t0=$(date +%s.%N)
  timeout 90 "$OHA" --no-tui --output-format json -m POST -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -H "Accept: $(accept "$k")" -d "$BODY" "$@" "$(url "$k")" >"$OUT/$k.$tag.json"
  c1=$(cpu_ticks); t1=$(date +%s.%N)
  python3 "$BENCH/oha_row.py" "$OUT/$k.$tag.json" "$c0" "$c1" "$hz" "$t0" "$t1" "$k" "$tag" >>"$OUT/runs.tsv"
}

printf 'kind\ttag\t%s\n' "$(python3 "$BENCH/oha_row.py" --header)" >"$OUT/runs.tsv"   # req_s = streams/s here
{ echo "date: $(date -Is)"; echo "loadavg at start: $(cat /proc/loadavg)"
  echo "settings: REPS=$REPS DUR=${DUR}s WARM=${WARM}s CONC=$CONC N1=$N1 KINDS=$KINDS"
  echo "switchboard: $SB ($(stat -c '%y' "$SB" | cut -d. -f1)), git $(git -C "$BENCH/.." rev-parse --short HEAD)"; } | tee "$OUT/env.txt"
for k in $KINDS; do timeout 60 "$OHA" --no-tui -m POST -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
  -H "Accept: $(accept "$k")" -d "$BODY" -z "${WARM}s" -c "$CONC" "$(url "$k")" >/dev/null; done
for k in $KINDS; do load "$k" 1c -n "$N1" -c 1; done
kinds=($KINDS)
for r in $(seq 1 "$REPS"); do
  if [ $(( r % 2 )) = 1 ]; then order=("${kinds[@]}"); else order=(); for (( i=${#kinds[@]}-1; i>=0; i-- )); do order+=("${kinds[$i]}"); done; fi
  for k in "${order[@]}"; do load "$k" "r$r" -z "${DUR}s" -c "$CONC"; done
done
echo "loadavg at end: $(cat /proc/loadavg)" | tee -a "$OUT/env.txt"

python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f'{out}/runs.tsv'), delimiter='\t'))
kinds = list(dict.fromkeys(r['kind'] for r in rows))
med = statistics.median
print(f'| kind | streams/s (median of {len([r for r in rows if r["kind"] == kinds[0] and r["tag"] != "1c"])}) '
      '| server CPU µs/stream | server CPU % | p50 ms (64 conn) | 1-conn p50 ms | bytes/stream | failed | ÷ plain |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
base = None
for k in kinds:
    rs = [r for r in rows if r['kind'] == k and r['tag'] != '1c']
    one = [r for r in rows if r['kind'] == k and r['tag'] == '1c']
    sps = med([float(r['req_s']) for r in rs])
    base = base or sps
    print(f"| {k} | {sps:,.0f} | {med([float(r['server_cpu_us_per_req']) for r in rs]):.0f} "
          f"| {med([float(r['server_cpu_pct']) for r in rs]):.0f} | {med([float(r['p50_ms']) for r in rs]):.2f} "
          f"| {float(one[0]['p50_ms']) if one else float('nan'):.2f} | {rs[0]['bytes_per_req']} "
          f"| {sum(int(r['failed']) for r in rs + one)} | {sps / base:.3f} |")
if 'plain' in kinds:
    for k in kinds:
        if k == 'plain':
            continue
        per = []
        for tag in sorted({r['tag'] for r in rows if r['tag'] != '1c'}):
            p = next(float(r['req_s']) for r in rows if r['kind'] == 'plain' and r['tag'] == tag)
            a = next(float(r['req_s']) for r in rows if r['kind'] == k and r['tag'] == tag)
            per.append(a / p)
        m = med(per)
        print()
        print(f"{k} ÷ plain streams/s per round: {' '.join(f'{x:.3f}' for x in per)}; median {m:.3f}, "
              f"i.e. AG-UI costs {100 * (1 - m):.1f} % (goal < 10 %): {'PASS' if m >= 0.9 else 'FAIL'}")
PY
echo "results: $OUT"
