#!/usr/bin/env bash
# bench/callgrind.sh - instructions, cache and branch misses per request of one build, under
# valgrind's callgrind (cache and branch simulation). Far steadier than wall clock on these
# shared 2-core machines (not exact: thread scheduling varies the polls and wake-ups): at the
# default N two builds, or one build with and without a change, compare to about 0.2 %
# (bench/RESULTS.md sessions 15-19).
#
#   bench/callgrind.sh <binary> <label> [message-unary|task-unary|task-stream]
#   SB_EXP=8 bench/callgrind.sh /work/sb-exp exp-b8 message-unary   # the environment reaches serve
#
# N requests (default 10000, ~1 min) at C connections (default 64) are counted, after 200
# unmeasured ones; the per-request figures are the totals ÷ N, so per-connection costs (spawn,
# hyper's set-up) weigh about C/N of a request here, more than in a timed run. With N=2000 one
# build's runs spread by ±500 instructions per request; with 10000, by ~100 (session 19).
# Estimated cycles (as p16d/p16e used them): Ir + 10·(I1mr + D1mr + D1mw) + 15·(Bcm + Bim).
# memcpy_Ir is glibc's memcpy/memmove alone: valgrind counts every iteration of a `rep movsb`
# as one instruction (and one branch), and glibc copies ≥ 2 KiB that way here, so one 9 KB
# copy reads as ~9,000 Ir though the CPU does it in a few hundred cycles (session 20: the
# box `a157899` copied per request made it look 8k Ir dearer than it ran). Compare builds by
# Ir − memcpy_Ir as well when their large copies differ.
# Loopback only; the server is started here and stopped at the end; oha bounded by -n.
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BIN=${1:?binary} LABEL=${2:?label} LOAD=${3:-message-unary}
N=${N:-10000} C=${C:-64} PORT=${PORT:-7391}
BENCH=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$BENCH/out/callgrind}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
HOST=127.0.0.1
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then echo "port $PORT on $HOST is in use" >&2; exit 1; fi
mkdir -p "$OUT"
UNARY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
STREAM='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
agent=echo-task; case $LOAD in message-*) agent=echo-message ;; esac
body=$UNARY; case $LOAD in *-stream) body=$STREAM ;; esac
F=$OUT/$LABEL.$LOAD.cg
rm -f "$F" "$F".*
env SWITCHBOARD_LOG=warn valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --callgrind-out-file="$F" \
  "$BIN" serve --listen "$HOST:$PORT" --store memory --agent "$agent" >"$OUT/$LABEL.$LOAD.log" 2>&1 &
VPID=$!
trap 'kill $VPID 2>/dev/null || true; wait $VPID 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do curl -fsS -o /dev/null "http://$HOST:$PORT/.well-known/agent-card.json" 2>/dev/null && break; sleep 0.2; done
send() {
  timeout 600 "$OHA" --no-tui -n "$1" -c "$C" -m POST -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    -d "$body" "http://$HOST:$PORT/" --output-format json >"$OUT/$LABEL.$LOAD.oha.$1.json"
}
send 200
callgrind_control -z "$VPID" >/dev/null
send "$N"
callgrind_control -d "$VPID" >/dev/null
sleep 1
D=$(ls -t "$F".* 2>/dev/null | grep -v '\.0$' | head -1 || true)
[ -n "$D" ] || D=$(ls -t "$F"* | head -1)
python3 - "$D" "$N" "$OUT/$LABEL.$LOAD.oha.$N.json" <<'PY'
import json, sys
dump, n, oha = sys.argv[1], int(sys.argv[2]), sys.argv[3]
events = totals = None
names, fn, skip, memcpy = {}, '', False, 0
for line in open(dump):
    if line.startswith('events:'):
        events = line.split()[1:]
    if line.startswith(('summary:', 'totals:')):
        totals = [int(x) for x in line.split()[1:]]
    # Self cost of memcpy/memmove: the cost lines under their fn=, not the calls' lines.
    if line.startswith(('fn=', 'cfn=')):
        key, _, name = line.split('=', 1)[1].strip().partition(' ')
        if name:
            names[key] = name
        if line.startswith('fn='):
            fn = names.get(key, key)
    elif line.startswith('calls='):
        skip = True
    elif line[:1].isdigit() or line[:1] in '+-*':
        if not skip and ('memcpy' in fn or 'memmove' in fn):
            memcpy += int(line.split()[1])
        skip = False
o = json.load(open(oha))
ok = sum(v for k, v in o.get('statusCodeDistribution', {}).items() if k.startswith('2'))
per = {e: t / n for e, t in zip(events, totals)}
est = per['Ir'] + 10 * (per['I1mr'] + per['D1mr'] + per['D1mw']) + 15 * (per['Bcm'] + per['Bim'])
print(f"{dump}: {ok} of {n} answered 2xx; per request " + " ".join(f"{e}={v:.0f}" for e, v in per.items())
      + f" est.cycles={est:.0f} memcpy_Ir={memcpy / n:.0f}")
PY
