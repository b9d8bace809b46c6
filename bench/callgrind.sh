#!/usr/bin/env bash
# bench/callgrind.sh - instructions per request of one `serve` build under one load, counted by
# callgrind: deterministic where req/s on a shared 2-core machine is not, so two builds compare
# to the per cent even while the machine is busy (bench/RESULTS.md, 2026-12-07 20:00 UTC).
#
#   bench/callgrind.sh /path/switchboard task-stream [N=2000] [PORT=7421]
#
# LOAD: message-unary, task-unary, task-stream (memory store) or sqlite-unary (a fresh file).
# The server runs under valgrind; 300 requests warm it up, the counters are zeroed, N requests
# (oha, 4 connections) are counted and dumped. Prints Ir per request; the profile is
# $OUT/cg.out.1 (compare two with bench/cgdiff.py). SB_ARGS: extra serve flags;
# LOGLEVEL: SWITCHBOARD_LOG (default warn). Loopback only, bounded by N.
set -euo pipefail
BIN=$1 LOAD=$2 N=${3:-2000} PORT=${4:-7421}
BENCH=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$BENCH/out/callgrind/$(basename "$BIN")-$LOAD}
rm -rf "$OUT"; mkdir -p "$OUT"
store=memory agent=echo-task
case $LOAD in sqlite-*) store="sqlite://$OUT/sb.db" ;; message-*) agent=echo-message ;; esac
UNARY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
STREAM='{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
body=$UNARY; case $LOAD in *-stream) body=$STREAM ;; esac
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
# shellcheck disable=SC2086 # SB_ARGS splits on purpose
SWITCHBOARD_RATE_PER_SECOND=0 SWITCHBOARD_LOG=${LOGLEVEL:-warn} valgrind --tool=callgrind \
  --callgrind-out-file="$OUT/cg.out" "$BIN" serve --listen "127.0.0.1:$PORT" --store "$store" \
  --agent "$agent" ${SB_ARGS:-} >"$OUT/serve.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/.well-known/agent-card.json" 2>/dev/null && break; sleep 0.2; done
load() { timeout 600 "$OHA" --no-tui -n "$1" -c 4 -m POST -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$body" "http://127.0.0.1:$PORT/"; }
load 300 >/dev/null
callgrind_control -z "$PID" >/dev/null
load "$N" >"$OUT/oha.txt"
callgrind_control -d "$PID" >/dev/null
total=$(grep -h '^summary:' "$OUT/cg.out.1" | awk '{print $2}')
echo "$(basename "$BIN") $LOAD Ir/req=$(( total / N )) profile=$OUT/cg.out.1"
