#!/usr/bin/env bash
# bench/perf_ab.sh - where two builds spend their CPU on the same load: both servers up at once
# (ports 7321/7322, memory store), the same bounded oha load sent to each in turn (rounds
# alternating the order), `perf record -F 999 -g` on the loaded server meanwhile. Then
# `python3 bench/perf_diff.py OUT` prints perf samples per 1,000 answered requests per symbol,
# before and after, sorted by growth.
#
#   SB_BEFORE=/path/old SB=/path/new LOAD=message|task|grpc bench/perf_ab.sh
#
# LOAD: message (echo-message, JSON-RPC SendMessage), task (echo-task, same body), grpc
# (echo-task, gRPC SendMessage over h2c with the frame GRPC_FRAME writes). D=6 s per load,
# ROUNDS=2, CONC=64. The per-caller request rate is turned off on the after build when it has
# the flag. Loopback only; loads bounded by -z and `timeout`; only the servers started here are
# stopped. perf needs perf_event access (root here).
set -euo pipefail
# The load comes from one address as the anonymous principal: no request rate
# for it (serve limits each anonymous address to 50/s by default).
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BENCH=$(cd "$(dirname "$0")" && pwd)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
SB_BEFORE=${SB_BEFORE:?set SB_BEFORE to the other build}
GRPC_FRAME=${GRPC_FRAME:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/examples/grpc_bench_frame}
OHA=${OHA:-$(command -v oha || echo "$HOME/.cargo/bin/oha")}
LOAD=${LOAD:-message} D=${D:-6} ROUNDS=${ROUNDS:-2} CONC=${CONC:-64}
OUT=${OUT:-$BENCH/out/results/perf-$LOAD-$(date +%Y%m%d-%H%M%S)}
HOST=127.0.0.1 PORT_B=7321 PORT_A=7322
for p in $PORT_B $PORT_A; do
  if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then echo "port $p on $HOST is in use" >&2; exit 1; fi
done
mkdir -p "$OUT"
agent=echo-task; [ "$LOAD" = message ] && agent=echo-message
BODY='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}'
rate=(); "$SB" serve --help | grep -q -- --rate-per-second && rate=(--rate-per-second 0)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT
SWITCHBOARD_LOG=warn "$SB_BEFORE" serve --listen $HOST:$PORT_B --store memory --agent $agent >"$OUT/serve-before.log" 2>&1 &
PIDS+=($!); PID_B=$!
SWITCHBOARD_LOG=warn "$SB" serve --listen $HOST:$PORT_A --store memory --agent $agent "${rate[@]}" >"$OUT/serve-after.log" 2>&1 &
PIDS+=($!); PID_A=$!
for p in $PORT_B $PORT_A; do
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://$HOST:$p/.well-known/agent-card.json" 2>/dev/null && break; sleep 0.1; done
done
if [ "$LOAD" = grpc ]; then
  "$GRPC_FRAME" request "$OUT/grpc.bin"
  req=(--http2 -p 1 -m POST -H 'content-type: application/grpc' -H 'te: trailers' -H 'a2a-version: 1.0' -D "$OUT/grpc.bin")
  path=/lf.a2a.v1.A2AService/SendMessage
  # oha sees HTTP statuses only: check once that the call succeeds (grpc-status 0).
  for p in $PORT_B $PORT_A; do
    curl -sS --max-time 10 --http2-prior-knowledge -D - -o /dev/null -H 'content-type: application/grpc' -H 'te: trailers' \
      -H 'a2a-version: 1.0' --data-binary @"$OUT/grpc.bin" "http://$HOST:$p$path" | grep -qi '^grpc-status: 0' ||
      { echo "gRPC check failed on port $p" >&2; exit 1; }
  done
else
  req=(-m POST -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$BODY")
  path=/
fi
hz=$(getconf CLK_TCK)
one() {  # one before|after PORT PID ROUND
  local c0 c1 perf
  c0=$(awk '{print $14+$15}' "/proc/$3/stat")
  perf record -F 999 -g -p "$3" -o "$OUT/perf-$1-$4.data" -- sleep "$D" 2>>"$OUT/perf.log" &
  perf=$!
  timeout 90 "$OHA" --no-tui --output-format json -c "$CONC" -z "${D}s" "${req[@]}" "http://$HOST:$2$path" >"$OUT/oha-$1-$4.json"
  c1=$(awk '{print $14+$15}' "/proc/$3/stat")
  wait "$perf" || true
  python3 - "$OUT/oha-$1-$4.json" "$c0" "$c1" "$hz" "$1" "$4" <<'PY' | tee -a "$OUT/rows.tsv"
import json, sys
d = json.load(open(sys.argv[1])); codes = d.get('statusCodeDistribution') or {}; ok = codes.get('200', 0)
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4])
print(f"{sys.argv[5]}\tround {sys.argv[6]}\t{d['summary']['requestsPerSec']:.0f} req/s\t"
      f"server CPU {1e6 * cpu / ok if ok else 0:.1f} µs/req (under perf)\tstatuses {codes}")
PY
}
echo "loadavg at start: $(cat /proc/loadavg)" | tee "$OUT/env.txt"
timeout 30 "$OHA" --no-tui -c "$CONC" -z 2s "${req[@]}" "http://$HOST:$PORT_B$path" >/dev/null
timeout 30 "$OHA" --no-tui -c "$CONC" -z 2s "${req[@]}" "http://$HOST:$PORT_A$path" >/dev/null
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then one before $PORT_B $PID_B "$r"; one after $PORT_A $PID_A "$r"
  else one after $PORT_A $PID_A "$r"; one before $PORT_B $PID_B "$r"; fi
done
echo "loadavg at end: $(cat /proc/loadavg)" | tee -a "$OUT/env.txt"
python3 "$BENCH/perf_diff.py" "$OUT" | tee "$OUT/diff.txt"
