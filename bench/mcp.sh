#!/usr/bin/env bash
# bench/mcp.sh - what `switchboard mcp` adds to a call: the latency of one tool call through the
# MCP front (streamable HTTP, a legacy session, the result read from its SSE answer) against the
# same message sent to the agent directly (SendMessage; SendStreamingMessage read to its end,
# which is what the front does), one call at a time, the three interleaved so they see the same
# noise (bench/mcp_latency.py).
#
#   SB=/path/to/switchboard bench/mcp.sh         # N=2000 calls of each kind, plus N/10 warm-up
#
# AGENT (default echo-task: the echo agent, tool `echo`) N=2000 PORT_SERVE=7331 PORT_MCP=7332.
# Needs the interop venv (interop/setup.sh) for httpx. Loopback only; only the processes
# started here are stopped.
set -euo pipefail
export SWITCHBOARD_RATE_PER_SECOND="${SWITCHBOARD_RATE_PER_SECOND:-0}"
BENCH=$(cd "$(dirname "$0")" && pwd)
SB=${SB:-${CARGO_TARGET_DIR:-/work/target-bench}/dist/switchboard}
PY=${PY:-$BENCH/../interop/.venv/bin/python}
N=${N:-2000} AGENT=${AGENT:-echo-task} TOOL=${TOOL:-echo}
PORT_SERVE=${PORT_SERVE:-7331} PORT_MCP=${PORT_MCP:-7332}
OUT=${OUT:-$BENCH/out/results/mcp-$(date +%Y%m%d-%H%M%S)}
HOST=127.0.0.1
for p in "$PORT_SERVE" "$PORT_MCP"; do
  if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then echo "port $p on $HOST is in use" >&2; exit 1; fi
done
mkdir -p "$OUT"
SERVE_PID="" MCP_PID=""
stop() { for p in $MCP_PID $SERVE_PID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; SERVE_PID="" MCP_PID=""; }
trap stop EXIT
wait_port() { for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }

SWITCHBOARD_LOG=warn "$SB" serve --listen "$HOST:$PORT_SERVE" --store memory --agent "$AGENT" >>"$OUT/serve.log" 2>&1 &
SERVE_PID=$!
wait_port "$PORT_SERVE"
SWITCHBOARD_MCP_LOG=warn "$SB" mcp --agent "http://$HOST:$PORT_SERVE" --listen "$HOST:$PORT_MCP" >>"$OUT/mcp.log" 2>&1 &
MCP_PID=$!
wait_port "$PORT_MCP"
{ echo "date: $(date -Is)"; echo "loadavg at start: $(cat /proc/loadavg)"
  echo "settings: N=$N AGENT=$AGENT TOOL=$TOOL"
  echo "build: $SB ($(stat -c '%y' "$SB" | cut -d. -f1))"; } | tee "$OUT/env.txt"
printf 'kind\tcalls\tp50_ms\tp90_ms\tp99_ms\n' | tee "$OUT/latency.tsv"
"$PY" "$BENCH/mcp_latency.py" "http://$HOST:$PORT_SERVE" "http://$HOST:$PORT_MCP/mcp" "$N" "$TOOL" | tee -a "$OUT/latency.tsv"
echo "results in $OUT"
